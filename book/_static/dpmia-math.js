// An inline formula wider than the room left on its line (a phone's narrow column) is marked, so that the
// stylesheet lets it wrap to a line of its own; if it is still wider than the line it is scaled down (to 70 %
// at most), and beyond that it scrolls within itself, never running past the column.
(function () {
  function markWide() {
    document.querySelectorAll('article mjx-container:not([display="true"])').forEach(function (m) {
      m.classList.remove("dpmia-wide-math");
      m.style.fontSize = "";
      var box = m.parentElement.closest("p, li, td, th, dd, dt, figcaption, div") || m.parentElement;
      var b = box.getBoundingClientRect(), r = m.getBoundingClientRect();
      if (r.right > b.right + 1 || r.width > b.width + 1) {
        m.classList.add("dpmia-wide-math");
        var ratio = b.width / m.scrollWidth;
        if (ratio < 1) m.style.fontSize = Math.max(70, Math.floor(ratio * 100) - 1) + "%";
      }
    });
  }
  function whenTypeset() {
    var mj = window.MathJax;
    var ready = mj && mj.startup && mj.startup.promise ? mj.startup.promise : Promise.resolve();
    ready.then(markWide);
  }
  window.addEventListener("load", whenTypeset);
  var t;
  window.addEventListener("resize", function () { clearTimeout(t); t = setTimeout(markWide, 150); });
})();
