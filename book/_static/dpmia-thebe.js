// Live Code (Thebe) loader for the book. Replaces sphinx-thebe's loader so that a reader without
// internet gets a clear message instead of "Loading thebe from CDN..." forever. Thebe itself and
// the kernel come from the internet (unpkg.com and mybinder.org); everything else on the page
// (math, saved widget views, figures) works offline.
(function () {
  "use strict";
  const OFFLINE_HELP =
    "Live Code runs this page on mybinder.org and needs an internet connection. " +
    "The figures, sliders' saved states and math on this page work without one. " +
    "To run the chapter yourself, download the notebook (the download button at the top " +
    "of the page) and open it in JupyterLab, or run <code>make lab</code> in a clone of the book.";
  const LOAD_TIMEOUT_MS = 20000;

  function button() {
    return document.querySelector(".thebe-launch-button");
  }

  function say(html, failed) {
    const b = button();
    if (!b) return;
    b.classList.toggle("dpmia-thebe-failed", !!failed);
    b.innerHTML = html;
  }

  function fail(reason) {
    say("<strong>Live Code is unavailable:</strong> " + reason + " " + OFFLINE_HELP, true);
  }

  function configure() {
    if (document.querySelectorAll("div.thebe-cell").length > 0) return;
    let status;
    thebelab.on("status", function (evt, data) {
      const b = button();
      if (b && status) b.classList.remove("thebe-status-" + status);
      if (b) b.classList.add("thebe-status-" + data.status);
      status = data.status;
      if (data.status === "failed") {
        fail("mybinder.org could not start a kernel (" + (data.message || "no answer") + ").");
        return;
      }
      say("Launching from mybinder.org: <span class='status'>" + data.status + "</span>");
      if (data.status === "ready") {
        document.querySelectorAll(".thebe-init, .tag_thebe-init").forEach(function (cell) {
          const run = cell.querySelector(".thebelab-run-button");
          if (run) run.click();
        });
      }
    });
  }

  function prepareCells() {
    document.querySelectorAll(thebe_selector).forEach(function (cell, i) {
      cell.id = "codecell" + i;
      const input = cell.querySelector(thebe_selector_input);
      const output = cell.querySelector(thebe_selector_output);
      if (input) {
        input.setAttribute("data-language", "python");
        input.setAttribute("data-executable", "true");
        if (output) {
          output.setAttribute("data-output", "");
          input.insertAdjacentElement("afterend", output);
        }
      }
      cell.querySelectorAll("button.copybtn").forEach(function (el) { el.remove(); });
    });
  }

  function start() {
    configure();
    prepareCells();
    thebelab.bootstrap();
  }

  window.initThebe = function () {
    if (typeof thebelab !== "undefined") { start(); return; }
    if (!navigator.onLine) { fail("this computer is offline."); return; }
    say("Loading Live Code from unpkg.com&hellip;");
    const script = document.createElement("script");
    const timer = setTimeout(function () {
      fail("the Thebe library did not arrive from unpkg.com within 20 s.");
    }, LOAD_TIMEOUT_MS);
    script.src = THEBE_JS_URL;
    script.addEventListener("load", function () { clearTimeout(timer); start(); });
    script.addEventListener("error", function () {
      clearTimeout(timer);
      fail("the Thebe library could not be downloaded from unpkg.com.");
    });
    document.head.appendChild(script);
  };
})();
