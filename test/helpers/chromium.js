'use strict';
// Debian's Chromium for the browser tests (test/browser.test.js), driven by playwright-core. npm test's
// setup (test/setup.js) installs it when missing; here it is only looked up.
const { requireTool } = require('./provisioned');

/** Chromium's flags: headless, no sandbox (containers, root), nothing that reaches out to the network. */
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Launches Debian's Chromium with a fresh temporary profile; throws naming it when it is missing. */
async function launchChromium() {
  const { chromium } = require('playwright-core');
  return chromium.launch({ executablePath: requireTool('chromium'), args: ARGS, headless: true });
}

module.exports = { launchChromium, ARGS };
