// Progressive enhancement only: every form works without this file.
// Forms with data-confirm ask before they are sent.
document.addEventListener("submit", (event) => {
  const message = event.target.dataset && event.target.dataset.confirm;
  if (message && !window.confirm(message)) {
    event.preventDefault();
  }
});
