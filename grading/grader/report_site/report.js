"use strict";
// The class report's only script: a name filter and sortable columns. Without it every table
// still reads in class order.
(function () {
  function value(cell, numeric) {
    var raw = cell.getAttribute("data-value");
    if (raw === null) raw = cell.textContent;
    var number = Number(raw);
    if (!numeric) return raw.toLowerCase();
    return raw.trim() !== "" && isFinite(number) ? number : raw.trim().toLowerCase();
  }
  function compare(a, b) {
    var numeric = typeof a === "number", otherNumeric = typeof b === "number";
    if (numeric && otherNumeric) return a - b;
    if (numeric !== otherNumeric) return numeric ? -1 : 1;  // numbers before blanks and words
    return a < b ? -1 : a > b ? 1 : 0;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var headers = table.querySelectorAll("th[data-sort]");
    headers.forEach(function (header) {
      header.addEventListener("click", function () {
        var column = Array.prototype.indexOf.call(header.parentNode.children, header);
        var numeric = header.getAttribute("data-sort") === "num";
        var descending = header.classList.contains("sorted-asc");
        headers.forEach(function (other) { other.classList.remove("sorted-asc", "sorted-desc"); });
        header.classList.add(descending ? "sorted-desc" : "sorted-asc");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var order = compare(value(a.cells[column], numeric), value(b.cells[column], numeric));
          return descending ? -order : order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });
  var filter = document.getElementById("filter");
  if (filter) {
    filter.addEventListener("input", function () {
      var wanted = filter.value.trim().toLowerCase();
      document.querySelectorAll("table#gradebook tbody tr").forEach(function (row) {
        var name = (row.getAttribute("data-name") || "").toLowerCase();
        row.classList.toggle("hidden", wanted !== "" && name.indexOf(wanted) < 0);
      });
    });
  }
})();
