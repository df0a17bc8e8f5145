/* Draws every benchmark chart on the page with vega-embed (served by this site, no CDN).
 *
 * Material swaps page content on instant navigation and emits on `document$` each time, so the
 * charts are (re)drawn from there; the views of the previous page are finalized first. A change
 * of colour scheme redraws with colours taken from Material's CSS variables. The Vega bundle is
 * large, so it is fetched only once a page with a chart is shown.
 */
(function () {
  "use strict";

  var bundleUrl = new URL("vendor/vega-bundle.js", document.currentScript.src).href;
  var vegaReady = null;
  var views = [];
  var generation = 0;

  function loadVega() {
    if (!vegaReady) {
      vegaReady = new Promise(function (resolve, reject) {
        var script = document.createElement("script");
        script.src = bundleUrl;
        script.onload = function () { resolve(window.vegaEmbed); };
        script.onerror = function () {
          vegaReady = null;
          reject(new Error("could not load " + bundleUrl));
        };
        document.head.appendChild(script);
      });
    }
    return vegaReady;
  }

  function css(name) {
    return getComputedStyle(document.body).getPropertyValue(name).trim();
  }

  function themeConfig() {
    var fg = css("--md-default-fg-color");
    var light = css("--md-default-fg-color--light");
    var lighter = css("--md-default-fg-color--lighter");
    var lightest = css("--md-default-fg-color--lightest");
    return {
      background: null,
      font: getComputedStyle(document.body).fontFamily,
      title: { color: fg, subtitleColor: light },
      axis: { labelColor: light, titleColor: fg, gridColor: lightest, domainColor: lighter, tickColor: lighter },
      legend: { labelColor: light, titleColor: fg },
      text: { color: fg },
      view: { stroke: null }
    };
  }

  function drawAll() {
    var mine = ++generation;
    views.forEach(function (result) { result.finalize(); });
    views = [];
    var figures = document.querySelectorAll("figure.bench-chart");
    if (figures.length === 0) return;
    loadVega().then(function (vegaEmbed) {
      if (mine !== generation) return;  // a newer draw took over while the bundle loaded
      var dark = document.body.getAttribute("data-md-color-scheme") === "slate";
      figures.forEach(function (figure) { draw(figure, vegaEmbed, dark, mine); });
    }).catch(function (error) {
      console.error("charts.js: the static charts stay in place.", error);
    });
  }

  function draw(figure, vegaEmbed, dark, mine) {
    var target = figure.querySelector(".bench-chart__view[data-spec]");
    if (!target) return;
    var options = {
      actions: false,
      renderer: "svg",
      config: themeConfig(),
      tooltip: { theme: dark ? "dark" : "light" }
    };
    vegaEmbed(target, JSON.parse(target.getAttribute("data-spec")), options).then(function (result) {
      if (mine !== generation || !target.isConnected) {
        result.finalize();  // a newer draw or a page swap overtook this one
        return;
      }
      views.push(result);
      figure.classList.add("bench-chart--live");
    }).catch(function (error) {
      figure.classList.remove("bench-chart--live");
      console.error("charts.js: could not draw " + figure.id, error);
    });
  }

  if (typeof window.document$ !== "undefined") {
    window.document$.subscribe(drawAll);
  } else {
    document.addEventListener("DOMContentLoaded", drawAll);
  }
  new MutationObserver(drawAll).observe(document.body, {
    attributes: true,
    attributeFilter: ["data-md-color-scheme"]
  });
})();
