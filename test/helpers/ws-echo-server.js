// A WebSocket echo server with nothing but Node's own modules, so it runs anywhere a node binary does (a sandbox
// runs it with the node the platform places there). Usage: node ws-echo-server.js PORT. Each frame comes back with
// its opcode; text frames also carry what the server saw of the request: "echo:<text> token:<X-Access-Token>".
const http = require('node:http');
const { createHash } = require('node:crypto');

const port = Number(process.argv[2]);
const server = http.createServer((req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ url: req.url, headers: req.headers }));
});

function frame(opcode, payload) {
  const n = payload.length;
  const head = n < 126 ? Buffer.from([0x80 | opcode, n]) : n < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  if (n >= 126 && n < 65536) {
    head[0] = 0x80 | opcode;
    head[1] = 126;
    head.writeUInt16BE(n, 2);
  } else if (n >= 65536) {
    head[0] = 0x80 | opcode;
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(n), 2);
  }
  return Buffer.concat([head, payload]);
}

server.on('upgrade', (req, socket) => {
  const accept = createHash('sha1').update(`${req.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  const token = req.headers['x-access-token'] ?? '';
  let buf = Buffer.alloc(0);
  socket.on('data', (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      if (buf.length < 2) return;
      const opcode = buf[0] & 0x0f;
      let len = buf[1] & 0x7f;
      let off = 2;
      if (len === 126) {
        if (buf.length < 4) return;
        len = buf.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (buf.length < 10) return;
        len = Number(buf.readBigUInt64BE(2));
        off = 10;
      }
      const masked = (buf[1] & 0x80) !== 0;
      const mask = masked ? buf.subarray(off, off + 4) : undefined;
      if (masked) off += 4;
      if (buf.length < off + len) return;
      const payload = Buffer.from(buf.subarray(off, off + len));
      if (mask) for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i % 4];
      buf = buf.subarray(off + len);
      if (opcode === 8) {
        socket.end(frame(8, payload));
        return;
      }
      if (opcode === 9) socket.write(frame(10, payload));
      else if (opcode === 1) socket.write(frame(1, Buffer.from(`echo:${payload.toString()} token:${token}`)));
      else if (opcode === 2) socket.write(frame(2, payload));
    }
  });
  socket.on('error', () => {});
});

server.listen(port, '0.0.0.0', () => console.log(`ws-echo listening on ${server.address().port}`));
