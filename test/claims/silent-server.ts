/** A TCP server on 127.0.0.1 that accepts every connection and never answers: a hung remote. */
import { createServer, type Socket } from 'node:net';

export interface SilentServer {
  /** A git:// URL on it. */
  url: string;
  stop(): Promise<void>;
}

export async function silentServer(): Promise<SilentServer> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `git://127.0.0.1:${port}/remote.git`,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
