"use strict";
// The class report's only script: sortable columns (a header's button: a click, Enter or Space)
// and the gradebook's filters (name, verdict, lab, flag). Without it every table still reads in
// class order.
(function () {
  function key(cell, numeric) {
    var raw = cell ? cell.getAttribute("data-value") : "";
    if (raw === null) raw = cell.textContent;
    raw = raw.trim();
    if (!numeric) return raw.toLowerCase();
    return raw !== "" && isFinite(Number(raw)) ? Number(raw) : raw.toLowerCase();
  }
  function compare(a, b) {
    var numeric = typeof a === "number", otherNumeric = typeof b === "number";
    if (numeric && otherNumeric) return a - b;
    if (numeric !== otherNumeric) return numeric ? -1 : 1;  // numbers before blanks and words
    return a < b ? -1 : a > b ? 1 : 0;
  }
  function sortBy(table, header, headers) {
    var column = Array.prototype.indexOf.call(header.parentNode.children, header);
    var numeric = header.getAttribute("data-sort") === "num";
    var descending = header.getAttribute("aria-sort") === "ascending";
    headers.forEach(function (other) { other.setAttribute("aria-sort", "none"); });
    header.setAttribute("aria-sort", descending ? "descending" : "ascending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var left = key(a.cells[column], numeric), right = key(b.cells[column], numeric);
      var blank = (left === "") - (right === "");
      if (blank) return blank;  // blanks last, either way
      var order = compare(left, right);
      return (descending ? -order : order) || Number(a.getAttribute("data-order") || 0) -
        Number(b.getAttribute("data-order") || 0);
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var headers = Array.prototype.slice.call(table.querySelectorAll("th[data-sort]"));
    Array.prototype.forEach.call(table.tBodies[0].rows, function (row, index) {
      if (!row.hasAttribute("data-order")) row.setAttribute("data-order", String(index));
    });
    headers.forEach(function (header) {
      // on the header: a click anywhere on it, or its button's (Enter, Space) bubbles up to it
      header.addEventListener("click", function () { sortBy(table, header, headers); });
    });
  });

  var gradebook = document.getElementById("gradebook");
  var controls = ["filter", "filter-verdict", "filter-lab", "filter-flag"].map(function (id) {
    return document.getElementById(id);
  });
  if (!gradebook || controls.indexOf(null) >= 0) return;
  function shown(row, name, verdict, lab, flag) {
    if (name && (row.getAttribute("data-name") || "").toLowerCase().indexOf(name) < 0) return false;
    if (verdict) {
      var cells = row.querySelectorAll(lab ? "td[data-lab='" + CSS.escape(lab) + "']" : "td[data-lab]");
      var found = Array.prototype.some.call(cells, function (c) { return c.getAttribute("data-verdict") === verdict; });
      if (!found) return false;
    }
    if (flag) {
      var flags = (row.getAttribute("data-flags") || "").split(" ").filter(Boolean);
      return flags.some(function (item) {
        var parts = item.split(":"), kindMatches = flag === "*" || parts[0] === flag;
        return kindMatches && (!lab || parts[1] === lab || parts[1] === "");
      });
    }
    return true;
  }
  function apply() {
    var name = controls[0].value.trim().toLowerCase(), verdict = controls[1].value, lab = controls[2].value;
    var flag = controls[3].value, rows = gradebook.tBodies[0].rows, count = 0;
    Array.prototype.forEach.call(rows, function (row) {
      var visible = shown(row, name, verdict, lab, flag);
      row.classList.toggle("hidden", !visible);
      count += visible ? 1 : 0;
    });
    var counter = document.getElementById("filter-count");
    if (counter) counter.textContent = count + " of " + rows.length + " students shown";
  }
  controls.forEach(function (control) {
    control.addEventListener(control.tagName === "SELECT" ? "change" : "input", apply);
  });
  apply();
})();
