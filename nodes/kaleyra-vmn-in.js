module.exports = require('../dist/nodes/kaleyra-vmn-in');
