module.exports = require('../dist/nodes/kaleyra-config');
