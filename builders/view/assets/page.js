(function () {
  var SVG = "http://www.w3.org/2000/svg";
  function marks(el) { return (el.getAttribute("data-hl") || el.getAttribute("data-m") || "").split(" ").filter(Boolean); }
  function mark(el, on) {
    marks(el).forEach(function (n) {
      document.querySelectorAll('[data-m~="' + n + '"]').forEach(function (m) { m.classList.toggle("hl", on); });
    });
  }
  document.addEventListener("mouseover", function (e) { var t = e.target.closest("[data-hl],.tag,g[data-m]"); if (t) mark(t, true); });
  document.addEventListener("mouseout", function (e) { var t = e.target.closest("[data-hl],.tag,g[data-m]"); if (t) mark(t, false); });

  function node(name, attributes, parent) {
    var el = document.createElementNS(SVG, name);
    Object.keys(attributes).forEach(function (key) { el.setAttribute(key, attributes[key]); });
    parent.appendChild(el);
    return el;
  }
  // An arc as brat draws one: up from the source's label to a level above the labels of its line, across, and
  // down to the target's label with an arrowhead; an arc between lines leaves its line at the edge of the text
  // and comes in on the target's line from the other edge.
  function arc(svg, box, spec, prefix, level) {
    var from = document.getElementById(prefix + spec[0]), to = document.getElementById(prefix + spec[1]);
    if (!from || !to) return;
    var a = from.getBoundingClientRect(), b = to.getBoundingClientRect();
    var rowA = from.closest(".seg").getBoundingClientRect().top - box.top, rowB = to.closest(".seg").getBoundingClientRect().top - box.top;
    var x1 = a.left + a.width / 2 - box.left, y1 = a.top - box.top, x2 = b.left + b.width / 2 - box.left, y2 = b.top - box.top;
    var lift = 5 + 6 * (level % 3), topA = rowA + lift, topB = rowB + lift, d, labelX;
    var group = node("g", {"data-m": prefix + spec[0] + " " + prefix + spec[1]}, svg);
    if (Math.abs(rowA - rowB) < 4) {
      d = "M" + x1 + " " + y1 + " L" + x1 + " " + topA + " L" + x2 + " " + topA + " L" + x2 + " " + y2;
      labelX = (x1 + x2) / 2;
    } else {
      var forward = rowB > rowA, edgeA = forward ? box.width : 0, edgeB = forward ? 0 : box.width;
      d = "M" + x1 + " " + y1 + " L" + x1 + " " + topA + " L" + edgeA + " " + topA +
        " M" + edgeB + " " + topB + " L" + x2 + " " + topB + " L" + x2 + " " + y2;
      labelX = (edgeB + x2) / 2;
    }
    node("path", {"class": "arc " + spec[3], d: d}, group);
    node("path", {"class": "head " + spec[3], d: "M" + (x2 - 3.5) + " " + (y2 - 6) + " L" + (x2 + 3.5) + " " + (y2 - 6) + " L" + x2 + " " + y2 + " Z"}, group);
    if (spec[2]) {
      var text = node("text", {"class": "arc-label", x: labelX, y: topB + 3.5, "text-anchor": "middle"}, group);
      text.textContent = spec[2];
    }
  }
  function draw() {
    document.querySelectorAll(".text[data-arcs]").forEach(function (text) {
      var old = text.querySelector("svg.arcs");
      if (old) old.remove();
      var box = text.getBoundingClientRect();
      var svg = node("svg", {"class": "arcs", width: box.width, height: box.height}, text);
      JSON.parse(text.getAttribute("data-arcs")).forEach(function (spec, level) {
        arc(svg, box, spec, text.getAttribute("data-prefix"), level);
      });
    });
  }
  draw();
  window.addEventListener("resize", draw);
})();
