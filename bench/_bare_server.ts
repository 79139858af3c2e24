/**
 * Baseline for the ingest benchmark: a bare Deno.serve that reads the body
 * and answers 200. Prints its port on stdout.
 *
 * @module
 */
Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(`port ${port}`),
}, async (req) => {
  await req.arrayBuffer();
  return new Response('{"ok":true}', {
    headers: { "content-type": "application/json" },
  });
});
