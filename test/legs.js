'use strict';
// The legs of `npm test` (test/matrix.js), provisioned by test/setup.js: Node-RED 4.1 (the project's own
// devDependency) and 5.x, each on Node.js 22 and 24, the supported platforms (docs/adr/0007). The editor
// runs in the browser whatever the server's Node.js: its tests run on the Node.js 22 legs, which cover
// Node-RED 4 and 5; the Node.js 24 legs run everything else.
const LEGS = [
  { key: '4@22', nodeRed: 4, node: 22 },
  { key: '5@22', nodeRed: 5, node: 22, install: 'node-red@^5.0.0' },
  { key: '4@24', nodeRed: 4, node: 24, ignore: 'test/browser.test.js' },
  { key: '5@24', nodeRed: 5, node: 24, install: 'node-red@^5.0.0', ignore: 'test/browser.test.js' },
];

module.exports = { LEGS };
