// The receipt's Print button (a script file, not an onclick attribute: the
// Content-Security-Policy allows no inline script).
document.querySelectorAll("[data-print-page]").forEach((button) => {
  button.addEventListener("click", () => window.print());
});
