/**
 * A TCP proxy between Mnemo and a dependency (PostgreSQL, an S3 server), so a test can
 * make the dependency vanish and return without touching it: `cut()` closes every proxied
 * connection and refuses new ones (as a restarting server does), `restore()` accepts again.
 */
export interface TcpProxy {
  port: number;
  cut(): void;
  restore(): void;
  stop(): void;
}

export function startTcpProxy(targetHost: string, targetPort: number): TcpProxy {
  const sockets = new Set<{ end(): void }>();
  let open = true;
  const proxy = Bun.listen<{ upstream?: { write(chunk: Uint8Array): number; end(): void }; pending: Uint8Array[] }>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(client) {
        if (!open) return void client.end();
        sockets.add(client);
        client.data = { pending: [] };
        void Bun.connect({
          hostname: targetHost,
          port: targetPort,
          socket: {
            open(server) {
              if (!open) return void server.end();
              client.data.upstream = server;
              sockets.add(server);
              for (const chunk of client.data.pending) server.write(chunk);
            },
            data: (_server, chunk) => void client.write(chunk),
            close: () => void client.end(),
            error: () => void client.end(),
          },
        }).catch(() => client.end());
      },
      data(client, chunk) {
        if (client.data.upstream) client.data.upstream.write(chunk);
        else client.data.pending.push(new Uint8Array(chunk));
      },
      close(client) {
        client.data?.upstream?.end();
        sockets.delete(client);
      },
    },
  });
  return {
    port: proxy.port,
    cut() {
      open = false;
      for (const socket of sockets) socket.end();
      sockets.clear();
    },
    restore() {
      open = true;
    },
    stop() {
      open = false;
      for (const socket of sockets) socket.end();
      proxy.stop(true);
    },
  };
}
