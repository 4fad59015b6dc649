module.exports = require('../dist/nodes/kaleyra-click2call');
