/* global window, document, DOMParser */
// Progressive enhancement only: every page works without this file. On the overview, the live
// part is fetched again every 30 s and swapped in, unless someone is typing in one of its forms;
// on a wide screen, folded filters are opened.
(function () {
  "use strict";
  function refresh(region) {
    var url = region.getAttribute("data-refresh");
    var seconds = Number(region.getAttribute("data-refresh-seconds")) || 30;
    window.setInterval(function () {
      var current = document.getElementById(region.id);
      if (!current || current.contains(document.activeElement)) return;
      fetch(url, { credentials: "same-origin", headers: { accept: "text/html" }, redirect: "manual" })
        .then(function (response) {
          if (!response.ok) return undefined;
          return response.text();
        })
        .then(function (markup) {
          if (!markup) return;
          var parsed = new DOMParser().parseFromString(markup, "text/html").getElementById(region.id);
          var live = document.getElementById(region.id);
          if (parsed && live && !live.contains(document.activeElement)) live.replaceWith(document.adoptNode(parsed));
        })
        .catch(function () {
          // A missed refresh is retried on the next tick; the page stays as it was.
        });
    }, seconds * 1000);
  }
  document.addEventListener("DOMContentLoaded", function () {
    var regions = document.querySelectorAll("[data-refresh]");
    for (var i = 0; i < regions.length; i += 1) refresh(regions[i]);
    // Folded filters stay folded on a phone, where they would push the list out of view.
    if (window.matchMedia("(min-width: 641px)").matches) {
      var folds = document.querySelectorAll("details[data-open-when-wide]");
      for (var j = 0; j < folds.length; j += 1) folds[j].open = true;
    }
  });
})();
