module.exports = require('../dist/nodes/kaleyra-call-status');
