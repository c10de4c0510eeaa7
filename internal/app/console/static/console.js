// The sessions list's "select all" box; the console works without it.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var all = document.getElementById("all");
  if (!all) {
    return;
  }
  all.addEventListener("change", function () {
    document.querySelectorAll('input[name="sel"]').forEach(function (box) {
      box.checked = all.checked;
    });
  });
});
