// The page's only script (the Content-Security-Policy names it by its hash; html_page.py reads this file).
// Sorts a table (class "sortable") by the clicked column header; marks the table so the sort arrows
// show only when sorting works.
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.classList.add("js-sortable");
  var headers = table.querySelectorAll("th");
  headers.forEach(function (th, column) {
    th.addEventListener("click", function () {
      var ascending = th.getAttribute("aria-sort") !== "ascending";
      var numeric = th.dataset.type === "number";
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[column].dataset.sort, y = b.cells[column].dataset.sort;
        var order = numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
      headers.forEach(function (other) { other.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    });
  });
});
// Filters (a <select data-filter="key" data-filter-table="id">) show only the rows of table `id` whose
// data-key is the chosen value; a [data-filter-count="id"] element says how many show. Without the script
// the filters stay hidden (CSS: .js-filters) and every row shows.
function applyFilters(tableId) {
  var table = document.getElementById(tableId);
  var selects = document.querySelectorAll("select[data-filter-table='" + tableId + "']");
  var shown = 0;
  Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
    var visible = Array.prototype.every.call(selects, function (select) {
      return !select.value || row.getAttribute("data-" + select.dataset.filter) === select.value;
    });
    row.hidden = !visible;
    shown += visible ? 1 : 0;
  });
  var count = document.querySelector("[data-filter-count='" + tableId + "']");
  if (count) {
    count.textContent = shown + " of " + table.tBodies[0].rows.length + " shown";
  }
}
document.querySelectorAll("select[data-filter-table]").forEach(function (select) {
  document.body.classList.add("js-filters");
  select.addEventListener("change", function () { applyFilters(select.dataset.filterTable); });
  applyFilters(select.dataset.filterTable);
});
// A link to a claim's accordion (a superscript in the content, a claim in the panel) opens it, and the
// findings group it is in: following "#detail-2" alone would only scroll to a closed <details>.
function openTarget(hash) {
  var target = hash && document.getElementById(decodeURIComponent(hash.slice(1)));
  for (var box = target && target.closest("details"); box; box = box.parentElement.closest("details")) {
    box.open = true;
  }
}
document.addEventListener("click", function (event) {
  var link = event.target.closest && event.target.closest("a[href^='#']");
  if (link) {
    openTarget(link.getAttribute("href"));
  }
});
window.addEventListener("hashchange", function () { openTarget(location.hash); });
openTarget(location.hash);
