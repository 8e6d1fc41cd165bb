// The real client's dial of a recorded daemon socket: what `nx` does before it sends anything.
// usage: node client.js <nx install dir> <socket path>; prints one JSON document.
// From 24.0.5 the client goes through connectToDaemonSocket, which judges the socket's directory
// and its ancestry first; before, it is a plain net.connect.
'use strict';
const net = require('net');
const [nxDir, socketPath] = process.argv.slice(2);
const req = (m) => require(require.resolve(m, { paths: [nxDir] }));
let utils = null;
try {
  utils = req('nx/src/daemon/socket-utils');
} catch (e) {
  utils = null;
}
const checked = !!(utils && typeof utils.connectToDaemonSocket === 'function');
const done = (doc) => {
  process.stdout.write(JSON.stringify({ checked, ...doc }) + '\n');
  process.exit(0);
};
const socket = checked
  ? utils.connectToDaemonSocket(socketPath, () => done({ connected: true }))
  : net.connect(socketPath, () => done({ connected: true }));
socket.on('error', (e) => done({ connected: false, code: e && e.code, message: String(e && e.message) }));
setTimeout(() => done({ connected: false, code: 'TIMEOUT' }), 5000);
