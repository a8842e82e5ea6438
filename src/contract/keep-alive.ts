/**
 * How long the kit's HTTP servers (the gateway, the platform API, the agent) keep an idle keep-alive connection.
 * Longer than clients keep theirs (undici, the SDKs' fetch: 4 s; load balancers: 60 s), so the client is the side that
 * closes one: a client that sends a request into a connection as the server closes it loses the request, and a POST
 * lost that way is not retried. At Node's 5 s, an SDK busy for five seconds building a 100 MB upload lost it through
 * the gateway (`write EPIPE`).
 */
export const SERVER_KEEP_ALIVE_MS = 65_000;
