(function () {
  function marks(el) { return (el.getAttribute("data-hl") || el.getAttribute("data-m") || "").split(" ").filter(Boolean); }
  function mark(el, on) {
    marks(el).forEach(function (n) {
      document.querySelectorAll('[data-m~="' + n + '"]').forEach(function (m) { m.classList.toggle("hl", on); });
    });
  }
  document.addEventListener("mouseover", function (e) { var t = e.target.closest("[data-hl],.tag"); if (t) mark(t, true); });
  document.addEventListener("mouseout", function (e) { var t = e.target.closest("[data-hl],.tag"); if (t) mark(t, false); });
})();
