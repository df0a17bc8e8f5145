// Stand-in for the Colab tab's page, for running snippets/keep_alive.js under Node.
// Usage: node colab_page.js SNIPPET PAGE, where PAGE is "2019" (toolbar button), "current"
// (the button inside <colab-connect-button>'s shadow root) or "changed" (no button at all).
// Prints what happened as JSON: clicks, the interval in ms, the handle and the console lines.
"use strict";
const fs = require("fs");
const vm = require("vm");

const [snippetPath, page] = process.argv.slice(2);
let clicks = 0;
const button = { click: () => { clicks += 1; } };
const document = {
  querySelector(selector) {
    if (page === "current" && selector === "colab-connect-button") {
      return { shadowRoot: { querySelector: (inner) => (inner === "#connect" ? button : null) } };
    }
    if (page === "2019" && selector === "colab-toolbar-button#connect") return button;
    return null;
  },
};
const lines = [];
const timers = [];
const sandbox = {
  document,
  window: {},
  console: {
    log: (...args) => lines.push(["log", args.join(" ")]),
    warn: (...args) => lines.push(["warn", args.join(" ")]),
  },
  setInterval: (fn, ms) => { timers.push({ fn, ms }); return 42; },
};
vm.createContext(sandbox);
vm.runInContext(fs.readFileSync(snippetPath, "utf8"), sandbox);
for (let tick = 0; tick < 3; tick += 1) timers.forEach((timer) => timer.fn());
console.log(JSON.stringify({ clicks, intervals: timers.map((t) => t.ms), handle: sandbox.window.colabKeepAlive, lines }));
