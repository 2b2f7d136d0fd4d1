// Runs before first paint (a classic script: the CSP allows no inline script) so a saved theme never flashes.
(function () {
  try {
    var saved = localStorage.getItem('cairn.theme');
    if (saved === 'light' || saved === 'dark') document.documentElement.dataset.theme = saved;
  } catch (e) {
    /* storage unavailable: follow the system */
  }
})();
