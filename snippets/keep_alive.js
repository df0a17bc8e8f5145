// The Colab "keep-alive" trick, as shared since 2019. Read the warning next to it first.
// Paste into the browser's developer console on the Colab tab. Every 60 s it clicks Connect.
// It cannot lift the maximum runtime, and it stops working whenever Colab changes its page.
function clickConnect() {
  const button =
    document.querySelector("colab-connect-button")?.shadowRoot?.querySelector("#connect") ??
    document.querySelector("colab-toolbar-button#connect"); // the 2019 page
  if (button) {
    button.click();
    console.log("keep-alive: clicked Connect at", new Date().toLocaleTimeString());
  } else {
    console.warn("keep-alive: no Connect button found; Colab's page has changed");
  }
}
window.colabKeepAlive = setInterval(clickConnect, 60 * 1000);
// To stop it: clearInterval(window.colabKeepAlive)
