'use strict';
// The client of a deployed kaleyra-config node, for benchmarks that must reach its transport (to switch
// the multipart encoder, say). A benchmark's instrument only: flows never do this.
async function accountClient(configNode) {
  return configNode.client();
}

module.exports = { accountClient };
