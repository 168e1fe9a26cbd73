// The console's own behaviour that used to sit in inline handlers, which the Content-Security-Policy
// (script-src 'self') does not run: confirmations before destructive forms, and "Back" links.
"use strict";

// <form data-confirm="Delete topic T?">: ask before submitting (plain forms and htmx forms alike).
document.addEventListener("submit", (event) => {
  const form = event.target.closest("form[data-confirm]");
  if (form && !window.confirm(form.dataset.confirm)) {
    event.preventDefault();
    event.stopImmediatePropagation();
  }
}, true);

// <a data-history-back href="/">: go back when there is somewhere to go back to, else follow the link.
document.addEventListener("click", (event) => {
  const link = event.target.closest("a[data-history-back]");
  if (link && window.history.length > 1) {
    event.preventDefault();
    window.history.back();
  }
});

// <div data-live hx-trigger="every 10s, live:visible">: a live refresh that pauses while the tab is hidden
// (no request every few seconds from a tab nobody looks at) and catches up as soon as it is shown again.
document.addEventListener("htmx:beforeRequest", (event) => {
  if (document.hidden && event.detail.elt.hasAttribute("data-live")) {
    event.preventDefault();
  }
});
document.addEventListener("visibilitychange", () => {
  if (!document.hidden && window.htmx) {
    document.querySelectorAll("[data-live]").forEach((element) => window.htmx.trigger(element, "live:visible"));
  }
});

// The header's "More" menu (<details data-menu>): Enter or Space on its summary opens it (the browser's own);
// Escape closes it and gives the focus back to the summary, and a click or a focus outside closes it.
function closeMenus(except) {
  document.querySelectorAll("details[data-menu][open]").forEach((menu) => { if (menu !== except) menu.open = false; });
}
document.addEventListener("keydown", (event) => {
  const menu = event.target.closest && event.target.closest("details[data-menu][open]");
  if (event.key === "Escape" && menu) {
    menu.open = false;
    menu.querySelector("summary").focus();
  }
});
document.addEventListener("click", (event) => closeMenus(event.target.closest("details[data-menu]")));
document.addEventListener("focusin", (event) => closeMenus(event.target.closest("details[data-menu]")));
