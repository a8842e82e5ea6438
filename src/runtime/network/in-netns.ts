/**
 * Running a command in a named network namespace (/run/netns/<name>) and nothing else of it: `nsenter --net` enters
 * the network namespace only. `ip -n` and `ip netns exec` also give the command a mount namespace of its own, a copy
 * of the host's whole mount table with /sys mounted again, whose cost grows with every mount on the host (each
 * sandbox adds its disk and its namespace's name): with 400 such mounts, measured 5.1 ms a call for `ip -n ... link
 * show` and 6.4 ms for `ip netns exec ... true`, against 3.0-3.2 ms with 20; nsenter's stayed 2.7 ms. The runtime's
 * commands work through netlink and /proc/sys/net, which follow the network namespace; none reads /sys/class/net.
 */

/** Where named network namespaces are (iproute2's convention). */
export const NETNS_DIR = '/run/netns';

/** argv running `argv` in the network namespace named `name` (a name of the runtime's own: no path in it). */
export function inNetns(name: string, argv: readonly string[]): string[] {
  if (name.length === 0 || name.includes('/') || name === '.' || name === '..')
    throw new Error(`not a namespace name: ${JSON.stringify(name)}`);
  return ['nsenter', `--net=${NETNS_DIR}/${name}`, '--', ...argv];
}
