/*
 * netns-join BRIDGE_NETNS PEER PORT PID NAME ADDRESS PREFIX GATEWAY TIMEOUT_MS: moves a sandbox's parked link into the
 * network namespace of process PID and makes it the sandbox's, as join-link.ts's commands do, in this order: PEER
 * (parked in the namespace BRIDGE_NETNS, a path) moved into PID's namespace as `eth0`; that namespace named NAME (a
 * path under /run/netns: an empty file with the namespace bind-mounted on it, the directory a shared mount, as
 * `ip netns attach` makes them); in it, `lo` up, eth0 without an IPv6 link-local address (addrgenmode none), with
 * ADDRESS/PREFIX, up, and the default route via GATEWAY; then the bridge's port PORT watched until it forwards, at
 * most TIMEOUT_MS (the kernel turns a port to forwarding a few milliseconds after its link comes up).
 *
 * It does what four processes did (`ip link set ... netns` and `ip netns attach` side by side, then `ip -b` in the
 * namespace, then `ip -d link show` of the port until it forwards, each but `ip netns attach` through nsenter), with
 * one process and netlink and mount(2) alone. PID's namespace is opened once and used by that descriptor throughout,
 * so a pid reused meanwhile cannot redirect the link; a namespace that is this program's own or the bridge's is
 * refused before anything is done.
 *
 * On failure the step and the kernel's reason are printed on stderr and the exit code is 1 (2: usage); what was done
 * stays for the caller's detach to remove (bridge-network.ts). Run by the kit as root; built by
 * scripts/build-native.ts.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
// The kernel's headers after libc's (their definitions of the same names defer to libc's).
#include <linux/if_bridge.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "netlink.h"

static int usage(void) {
  fprintf(stderr, "usage: netns-join BRIDGE_NETNS PEER PORT PID NAME ADDRESS PREFIX GATEWAY TIMEOUT_MS\n");
  return 2;
}

static int fail(const char *step, int err) {
  fprintf(stderr, "netns-join: %s: %s\n", step, strerror(err));
  return 1;
}

/* Whether the namespace files `a` and `b` (descriptors) are one namespace. */
static int same_namespace(int a, int b) {
  struct stat x, y;
  return fstat(a, &x) == 0 && fstat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* A decimal number from `text` within [min, max], or -1. */
static long number(const char *text, long min, long max) {
  char *rest;
  errno = 0;
  long v = strtol(text, &rest, 10);
  if (errno != 0 || rest == text || *rest != '\0' || v < min || v > max) return -1;
  return v;
}

/*
 * `path` named after the namespace `ns` (a descriptor), as `ip netns attach` does: its directory made a shared mount
 * (bound on itself first where it is not a mount point), so that a name made later reaches the mount namespaces that
 * copied the host's since; then an empty file there with the namespace bind-mounted on it.
 */
static int name_namespace(const char *path, int ns) {
  char dir[4096];
  if (strlen(path) >= sizeof(dir)) return ENAMETOOLONG;
  strcpy(dir, path);
  dirname(dir);
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) return errno;
  if (mount("", dir, "none", MS_SHARED | MS_REC, NULL) != 0) {
    if (errno != EINVAL) return errno;
    if (mount(dir, dir, "none", MS_BIND | MS_REC, NULL) != 0) return errno;
    if (mount("", dir, "none", MS_SHARED | MS_REC, NULL) != 0) return errno;
  }
  int fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
  if (fd < 0) return errno;
  close(fd);
  char source[64];
  snprintf(source, sizeof(source), "/proc/self/fd/%d", ns);
  if (mount(source, path, "none", MS_BIND, NULL) != 0) {
    int err = errno;
    unlink(path);
    return err;
  }
  return 0;
}

/* The bridge port state of the link `index` (BR_STATE_*), or -1 with errno set (ENODEV: not a bridge port). */
static int port_state(int sock, int index) {
  struct message m;
  struct ifinfomsg info = {.ifi_family = AF_UNSPEC, .ifi_index = index};
  start(&m, RTM_GETLINK, 0, &info, sizeof(info));
  m.header.nlmsg_flags &= ~NLM_F_ACK;
  struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
  if (sendto(sock, &m, m.header.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) return -1;
  static char reply[32768];
  for (;;) {
    ssize_t n = recv(sock, reply, sizeof(reply), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    for (struct nlmsghdr *h = (struct nlmsghdr *)reply; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_seq != m.header.nlmsg_seq) continue;
      if (h->nlmsg_type == NLMSG_ERROR) {
        errno = -((struct nlmsgerr *)NLMSG_DATA(h))->error;
        return -1;
      }
      if (h->nlmsg_type != RTM_NEWLINK) continue;
      int left = (int)IFLA_PAYLOAD(h);
      for (struct rtattr *a = IFLA_RTA(NLMSG_DATA(h)); RTA_OK(a, left); a = RTA_NEXT(a, left)) {
        if ((a->rta_type & NLA_TYPE_MASK) != IFLA_LINKINFO) continue;
        int in_info = (int)RTA_PAYLOAD(a);
        for (struct rtattr *i = RTA_DATA(a); RTA_OK(i, in_info); i = RTA_NEXT(i, in_info)) {
          if ((i->rta_type & NLA_TYPE_MASK) != IFLA_INFO_SLAVE_DATA) continue;
          int in_slave = (int)RTA_PAYLOAD(i);
          for (struct rtattr *s = RTA_DATA(i); RTA_OK(s, in_slave); s = RTA_NEXT(s, in_slave))
            if ((s->rta_type & NLA_TYPE_MASK) == IFLA_BRPORT_STATE) return *(unsigned char *)RTA_DATA(s);
        }
      }
      errno = ENODEV;
      return -1;
    }
  }
}

static long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int main(int argc, char **argv) {
  if (argc != 10) return usage();
  const char *bridge_netns = argv[1], *peer = argv[2], *port = argv[3], *name = argv[5];
  long pid = number(argv[4], 2, 4194304), prefix = number(argv[7], 0, 32), timeout_ms = number(argv[9], 0, 600000);
  struct in_addr address, gateway;
  if (pid < 0 || prefix < 0 || timeout_ms < 0 || inet_pton(AF_INET, argv[6], &address) != 1 || inet_pton(AF_INET, argv[8], &gateway) != 1)
    return usage();
  if (strlen(peer) >= IFNAMSIZ || strlen(port) >= IFNAMSIZ || strncmp(name, "/run/netns/", 11) != 0 || strchr(name + 11, '/') != NULL ||
      name[11] == '\0')
    return usage();

  char path[64];
  snprintf(path, sizeof(path), "/proc/%ld/ns/net", pid);
  int target = open(path, O_RDONLY | O_CLOEXEC);
  if (target < 0) return fail(path, errno);
  int own = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  if (own < 0) return fail("/proc/self/ns/net", errno);
  int bridge = open(bridge_netns, O_RDONLY | O_CLOEXEC);
  if (bridge < 0) return fail(bridge_netns, errno);
  if (same_namespace(target, own) || same_namespace(target, bridge)) {
    fprintf(stderr, "netns-join: process %ld is in the kit's own or the bridge's network namespace\n", pid);
    return 1;
  }

  if (setns(bridge, CLONE_NEWNET) != 0) return fail("entering the bridge's namespace", errno);
  int bridge_sock = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (bridge_sock < 0) return fail("netlink", errno);
  int peer_index = (int)if_nametoindex(peer), port_index = (int)if_nametoindex(port);
  if (peer_index == 0) return fail(peer, errno);
  if (port_index == 0) return fail(port, errno);
  struct message m;
  int err;

  link_request(&m, peer_index, 0);
  unsigned fd = (unsigned)target;
  put(&m, IFLA_NET_NS_FD, &fd, sizeof(fd));
  put(&m, IFLA_IFNAME, "eth0", 5);
  if ((err = call_on(bridge_sock, &m)) != 0) return fail("moving the link into the sandbox's namespace", err);
  if ((err = name_namespace(name, target)) != 0) return fail("naming the sandbox's namespace", err);

  if (setns(target, CLONE_NEWNET) != 0) return fail("entering the sandbox's namespace", errno);
  int sock = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (sock < 0) return fail("netlink", errno);
  int lo = (int)if_nametoindex("lo"), eth0 = (int)if_nametoindex("eth0");
  if (lo == 0) return fail("lo", errno);
  if (eth0 == 0) return fail("eth0", errno);
  if ((err = link_up(sock, lo)) != 0) return fail("bringing lo up", err);

  link_request(&m, eth0, 0);
  struct rtattr *spec = put(&m, IFLA_AF_SPEC, NULL, 0);
  struct rtattr *inet6 = put(&m, AF_INET6, NULL, 0);
  put_u8(&m, IFLA_INET6_ADDR_GEN_MODE, IN6_ADDR_GEN_MODE_NONE);
  end(&m, inet6);
  end(&m, spec);
  if ((err = call_on(sock, &m)) != 0) return fail("eth0's addrgenmode", err);

  struct ifaddrmsg addr = {.ifa_family = AF_INET, .ifa_prefixlen = (unsigned char)prefix, .ifa_index = (unsigned)eth0};
  start(&m, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, &addr, sizeof(addr));
  put(&m, IFA_LOCAL, &address, sizeof(address));
  put(&m, IFA_ADDRESS, &address, sizeof(address));
  if ((err = call_on(sock, &m)) != 0) return fail("eth0's address", err);
  if ((err = link_up(sock, eth0)) != 0) return fail("bringing eth0 up", err);

  struct rtmsg route = {.rtm_family = AF_INET,
                        .rtm_table = RT_TABLE_MAIN,
                        .rtm_protocol = RTPROT_BOOT,
                        .rtm_scope = RT_SCOPE_UNIVERSE,
                        .rtm_type = RTN_UNICAST};
  start(&m, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, &route, sizeof(route));
  put(&m, RTA_GATEWAY, &gateway, sizeof(gateway));
  if ((err = call_on(sock, &m)) != 0) return fail("the default route", err);

  // The bridge's side, on the socket made there.
  long deadline = now_ms() + timeout_ms;
  for (;;) {
    int state = port_state(bridge_sock, port_index);
    if (state < 0) return fail("the port's state", errno);
    if (state == BR_STATE_FORWARDING) return 0;
    if (now_ms() > deadline) {
      fprintf(stderr, "netns-join: its port %s is in bridge state %d, not forwarding, %ld ms after its link came up\n", port, state,
              timeout_ms);
      return 1;
    }
    struct timespec pause = {.tv_sec = 0, .tv_nsec = 1000000};
    nanosleep(&pause, NULL);
  }
}
