module.exports = require('../dist/nodes/kaleyra-whatsapp');
