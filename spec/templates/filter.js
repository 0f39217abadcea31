// The reports' filter (the catalog report, the trace-validation report): words typed in #q
// must all appear in an item's text; each <select data-filter="NAME"> keeps the items whose
// data-NAME equals its value. Items are the elements of class "filterable"; an element of
// class "filter-group" (a section) hides while filtering when none of its items shows, and
// opens when one does. ?q=...&NAME=... opens the page filtered. Nothing is fetched.
(function () {
  var q = document.getElementById("q");
  if (!q) { return; }
  var shown = document.getElementById("shown");
  var selects = Array.prototype.slice.call(document.querySelectorAll("select[data-filter]"));
  var items = Array.prototype.slice.call(document.querySelectorAll(".filterable"));
  var groups = Array.prototype.slice.call(document.querySelectorAll(".filter-group"));
  function text(el) {
    if (!el._text) { el._text = (el.textContent + " " + el.id).toLowerCase(); }
    return el._text;
  }
  function apply() {
    var words = q.value.toLowerCase().split(/\s+/).filter(Boolean);
    var active = words.length > 0 || selects.some(function (s) { return s.value; });
    var n = 0;
    items.forEach(function (el) {
      var ok = words.every(function (w) { return text(el).indexOf(w) >= 0; }) &&
        selects.every(function (s) {
          return !s.value || el.getAttribute("data-" + s.getAttribute("data-filter")) === s.value;
        });
      el.classList.toggle("hidden", !ok);
      if (ok) { n += 1; }
    });
    groups.forEach(function (g) {
      var any = g.querySelector(".filterable:not(.hidden)") !== null;
      g.classList.toggle("hidden", active && !any);
      if (active && any && g.tagName === "DETAILS") { g.open = true; }
    });
    if (shown) { shown.textContent = active ? n + " of " + items.length + " shown" : ""; }
  }
  var params = new URLSearchParams(location.search);
  q.value = params.get("q") || "";
  selects.forEach(function (s) { s.value = params.get(s.getAttribute("data-filter")) || ""; });
  q.addEventListener("input", apply);
  selects.forEach(function (s) { s.addEventListener("change", apply); });
  apply();
})();
