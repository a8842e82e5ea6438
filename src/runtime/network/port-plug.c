/*
 * port-plug NETNS TABLE PORTS BOUND BRIDGE PORT PEER MAC ADDRESS ALIAS: plugs a sandbox's port into its bridge, in the
 * network namespace NETNS (a path, /run/netns/<name>), as guard-rules.ts's attachPortCommands says, in this order:
 * first the port's L2 guard, in one nf_tables transaction: PORT added to the set PORTS and (PORT, MAC, ADDRESS) to the
 * set BOUND of the bridge-family table TABLE (both kept if there already); then the veth pair PORT and PEER made (PEER
 * with MAC, left down: the sandbox's namespace takes it later), PORT's alias set to ALIAS, PORT put on BRIDGE, then
 * made an isolated bridge port that neither learns nor is flooded; the bridge's permanent neighbour entry for ADDRESS
 * (MAC); the bridge's static FDB entry for MAC on PORT, the only way frames reach it; PORT up last.
 *
 * It does what `nft -f`, one `ip -b` batch and one `bridge` run did, with one process and netlink alone: `ip neigh`
 * and `bridge` each read every link of the namespace first, which grows with every sandbox on the bridge (measured,
 * 21 and 13 ms with 400 ports, 4 and 2 ms with none), and `nft` alone took 7-9 ms through nsenter.
 *
 * On failure the step and the kernel's reason are printed on stderr and the exit code is 1 (2: usage); what was made
 * stays for the caller's detach to remove (bridge-network.ts). Run by the kit as root; built by scripts/build-native.ts.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
// The kernel's headers after libc's (their definitions of the same names defer to libc's).
#include <linux/if_bridge.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>

#include "netlink.h"

/* The longest link alias the kernel keeps (IFALIASZ in linux/if.h, which cannot be included beside libc's net/if.h). */
#define ALIAS_MAX 256

static int usage(void) {
  fprintf(stderr, "usage: port-plug NETNS TABLE PORTS BOUND BRIDGE PORT PEER MAC ADDRESS ALIAS\n");
  return 2;
}

static int fail(const char *step, int err) {
  fprintf(stderr, "port-plug: %s: %s\n", step, strerror(err));
  return 1;
}

static int route_sock = -1;

/* Sends one rtnetlink request and reads its acknowledgement: 0, or the kernel's errno. */
static int call(struct message *m) { return call_on(route_sock, m); }

/* An nfnetlink message of `type` (subsystem and message) for `family`, with the resource id `res_id` (a subsystem). */
static void nf_start(struct message *m, int type, int flags, int family, int res_id) {
  struct nfgenmsg header = {.nfgen_family = (unsigned char)family, .version = NFNETLINK_V0, .res_id = htons(res_id)};
  start(m, type, flags, &header, sizeof(header));
  if (!(flags & NLM_F_ACK)) m->header.nlmsg_flags &= ~NLM_F_ACK;
}

/* An element of the set `set` of the bridge table `table` whose key is `key` (`size` bytes), to be added. */
static void new_element(struct message *m, const char *table, const char *set, const void *key, size_t size) {
  nf_start(m, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWSETELEM, NLM_F_CREATE | NLM_F_ACK, NFPROTO_BRIDGE, 0);
  put(m, NFTA_SET_ELEM_LIST_TABLE, table, strlen(table) + 1);
  put(m, NFTA_SET_ELEM_LIST_SET, set, strlen(set) + 1);
  struct rtattr *elements = put(m, NLA_F_NESTED | NFTA_SET_ELEM_LIST_ELEMENTS, NULL, 0);
  struct rtattr *element = put(m, NLA_F_NESTED | NFTA_LIST_ELEM, NULL, 0);
  struct rtattr *k = put(m, NLA_F_NESTED | NFTA_SET_ELEM_KEY, NULL, 0);
  put(m, NFTA_DATA_VALUE, key, size);
  end(m, k);
  end(m, element);
  end(m, elements);
}

/*
 * The port's two elements of the L2 guard, in one transaction. Keys as nft lays them out: an ifname is IFNAMSIZ bytes
 * (the name, zero-padded), and each field of a concatenation takes a whole number of 32-bit registers, so (ifname,
 * ether_addr, ipv4_addr) is 16 + 8 (6 and 2 of padding) + 4 bytes.
 */
static int guard_port(const char *table, const char *ports, const char *bound, const char *port, const unsigned char mac[6],
                      const struct in_addr *address) {
  int sock = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
  if (sock < 0) return errno;
  unsigned char name[IFNAMSIZ] = {0};
  memcpy(name, port, strlen(port));
  unsigned char key[IFNAMSIZ + 8 + 4] = {0};
  memcpy(key, name, IFNAMSIZ);
  memcpy(key + IFNAMSIZ, mac, 6);
  memcpy(key + IFNAMSIZ + 8, address, 4);
  static struct message begin, in_ports, in_bound, commit;
  nf_start(&begin, NFNL_MSG_BATCH_BEGIN, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
  new_element(&in_ports, table, ports, name, sizeof(name));
  new_element(&in_bound, table, bound, key, sizeof(key));
  nf_start(&commit, NFNL_MSG_BATCH_END, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
  struct message *batch[] = {&begin, &in_ports, &in_bound, &commit};
  int err = send_all(sock, batch, 4);
  close(sock);
  return err;
}

static int parse_mac(const char *text, unsigned char mac[6]) {
  unsigned v[6];
  char extra;
  if (sscanf(text, "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &extra) != 6) return -1;
  for (int i = 0; i < 6; i++) mac[i] = (unsigned char)v[i];
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 11) return usage();
  const char *netns = argv[1], *table = argv[2], *ports = argv[3], *bound = argv[4], *bridge = argv[5], *port = argv[6];
  const char *peer = argv[7], *alias = argv[10];
  unsigned char mac[6];
  struct in_addr address;
  if (parse_mac(argv[8], mac) != 0 || inet_pton(AF_INET, argv[9], &address) != 1) return usage();
  if (strlen(port) >= IFNAMSIZ || strlen(peer) >= IFNAMSIZ || strlen(alias) >= ALIAS_MAX) return usage();
  if (strlen(table) > 255 || strlen(ports) > 255 || strlen(bound) > 255) return usage();

  int ns = open(netns, O_RDONLY | O_CLOEXEC);
  if (ns < 0) return fail(netns, errno);
  if (setns(ns, CLONE_NEWNET) != 0) return fail("entering the namespace", errno);
  close(ns);
  int err;
  // The guard first: nothing of the port ever passes without it.
  if ((err = guard_port(table, ports, bound, port, mac, &address)) != 0) return fail("the port's L2 guard", err);

  route_sock = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (route_sock < 0) return fail("netlink", errno);
  struct message m;

  // The pair: PORT here, PEER with the sandbox's MAC (a veth's peer is described by its own ifinfomsg and attributes).
  link_request(&m, 0, NLM_F_CREATE | NLM_F_EXCL);
  put(&m, IFLA_IFNAME, port, strlen(port) + 1);
  struct rtattr *linkinfo = put(&m, IFLA_LINKINFO, NULL, 0);
  put(&m, IFLA_INFO_KIND, "veth", 4);
  struct rtattr *data = put(&m, IFLA_INFO_DATA, NULL, 0);
  struct ifinfomsg peer_info = {.ifi_family = AF_UNSPEC};
  struct rtattr *peer_nest = put(&m, VETH_INFO_PEER, &peer_info, sizeof(peer_info));
  put(&m, IFLA_IFNAME, peer, strlen(peer) + 1);
  put(&m, IFLA_ADDRESS, mac, sizeof(mac));
  end(&m, peer_nest);
  end(&m, data);
  end(&m, linkinfo);
  if ((err = call(&m)) != 0) return fail("making the veth pair", err);

  int port_index = (int)if_nametoindex(port);
  int bridge_index = (int)if_nametoindex(bridge);
  if (port_index == 0) return fail(port, errno);
  if (bridge_index == 0) return fail(bridge, errno);

  link_request(&m, port_index, 0);
  put(&m, IFLA_IFALIAS, alias, strlen(alias));
  if ((err = call(&m)) != 0) return fail("the port's alias", err);

  link_request(&m, port_index, 0);
  put(&m, IFLA_MASTER, &bridge_index, sizeof(bridge_index));
  if ((err = call(&m)) != 0) return fail("putting the port on the bridge", err);

  // Isolated (no frame to another isolated port), no learning, no unicast or multicast flooding.
  link_request(&m, port_index, 0);
  linkinfo = put(&m, IFLA_LINKINFO, NULL, 0);
  put(&m, IFLA_INFO_KIND, "bridge_slave", strlen("bridge_slave"));
  data = put(&m, IFLA_INFO_SLAVE_DATA, NULL, 0);
  put_u8(&m, IFLA_BRPORT_ISOLATED, 1);
  put_u8(&m, IFLA_BRPORT_LEARNING, 0);
  put_u8(&m, IFLA_BRPORT_UNICAST_FLOOD, 0);
  put_u8(&m, IFLA_BRPORT_MCAST_FLOOD, 0);
  end(&m, data);
  end(&m, linkinfo);
  if ((err = call(&m)) != 0) return fail("the port's bridge flags", err);

  struct ndmsg neighbour = {.ndm_family = AF_INET, .ndm_ifindex = bridge_index, .ndm_state = NUD_PERMANENT};
  start(&m, RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE, &neighbour, sizeof(neighbour));
  put(&m, NDA_DST, &address, sizeof(address));
  put(&m, NDA_LLADDR, mac, sizeof(mac));
  if ((err = call(&m)) != 0) return fail("the bridge's neighbour entry", err);

  // `bridge fdb replace MAC dev PORT master static`.
  struct ndmsg fdb = {.ndm_family = AF_BRIDGE, .ndm_ifindex = port_index, .ndm_state = NUD_REACHABLE | NUD_NOARP, .ndm_flags = NTF_MASTER};
  start(&m, RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE, &fdb, sizeof(fdb));
  put(&m, NDA_LLADDR, mac, sizeof(mac));
  if ((err = call(&m)) != 0) return fail("the bridge's FDB entry", err);

  if ((err = link_up(route_sock, port_index)) != 0) return fail("bringing the port up", err);
  return 0;
}
