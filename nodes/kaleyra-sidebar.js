// The account sidebar, a Node-RED plugin of this package: its editor part is kaleyra-sidebar.html. What it
// shows comes from the accounts' runtime (GET kaleyra/accounts and the comms topic kaleyra/accounts,
// registered with the kaleyra-config node type), so a runtime without the editor pays nothing for it.
module.exports = function (RED) {
  RED.plugins.registerPlugin('kaleyra-sidebar', {});
};
