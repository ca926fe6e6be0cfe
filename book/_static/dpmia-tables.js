// Label every table cell with its column header (data-label), so that on a narrow screen the
// stylesheet can stack a row's cells one under the other and still say what each one is.
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("article table").forEach(function (table) {
    var heads = Array.prototype.map.call(table.querySelectorAll("thead th"), function (th) {
      return th.innerText.replace(/\s+/g, " ").trim();
    });
    if (!heads.length) return;
    table.classList.add("dpmia-stackable");
    table.querySelectorAll("tbody tr").forEach(function (tr) {
      Array.prototype.forEach.call(tr.children, function (td, i) {
        if (heads[i]) td.setAttribute("data-label", heads[i]);
      });
    });
  });
});
