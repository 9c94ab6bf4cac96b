(function () {
  var search = document.getElementById("search"), split = document.getElementById("split"),
      label = document.getElementById("label"), flagged = document.getElementById("flagged"),
      shown = document.getElementById("shown"), rows = document.querySelectorAll("#documents tbody tr");
  function apply() {
    var words = search.value.toLowerCase().split(/\s+/).filter(Boolean), count = 0;
    rows.forEach(function (row) {
      var labels = row.getAttribute("data-labels").split("\u001f");
      var ok = (!split.value || row.getAttribute("data-split") === split.value) &&
        (!label.value || labels.indexOf(label.value) >= 0) &&
        (!flagged.checked || row.getAttribute("data-violations") !== "0") &&
        words.every(function (w) { return row.getAttribute("data-search").indexOf(w) >= 0; });
      row.classList.toggle("hidden", !ok);
      if (ok) count++;
    });
    shown.textContent = count;
  }
  [search, split, label, flagged].forEach(function (el) { el.addEventListener("input", apply); el.addEventListener("change", apply); });
  apply();
})();
