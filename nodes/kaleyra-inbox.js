module.exports = require('../dist/nodes/kaleyra-inbox');
