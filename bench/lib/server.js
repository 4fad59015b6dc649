'use strict';
// A minimal loopback server for the benchmarks, run as a child process (so its CPU and memory are not
// the measured process's): it reads each request body to the end without parsing it and answers the
// service's JSON success envelope of a send. It reports its port; on request, the bytes it drained and
// (after 'capture') the next request's content type and body, to check that clients send the same.
const http = require('node:http');

const ANSWER = Buffer.from(
  JSON.stringify({ status: 'OK', message: 'message processed successfully', data: [{ id: 'bench0000000000000001', mobile: '919700000001', status: 'AWAITED-DLR' }] }),
);
let bytes = 0;
let requests = 0;
let capture = false;

const server = http.createServer((req, res) => {
  const chunks = capture ? [] : undefined;
  capture = false;
  req.on('data', (chunk) => {
    bytes += chunk.length;
    chunks?.push(chunk);
  });
  req.on('end', () => {
    requests++;
    if (chunks) process.send({ captured: { type: req.headers['content-type'], length: req.headers['content-length'], body: Buffer.concat(chunks).toString('latin1') } });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': ANSWER.length });
    res.end(ANSWER);
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (m) => {
  if (m === 'stats') process.send({ bytes, requests });
  if (m === 'capture') {
    capture = true;
    process.send({ capturing: true });
  }
  if (m === 'stop') server.close(() => process.exit(0));
});
process.on('disconnect', () => process.exit(0));
