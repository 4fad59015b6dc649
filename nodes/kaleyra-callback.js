module.exports = require('../dist/nodes/kaleyra-callback');
