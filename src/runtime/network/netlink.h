/*
 * Netlink requests for the network helper programs (port-plug.c, netns-join.c): a request is built in one fixed-size
 * message (its family header, then attributes, nests closed by `end`), sent alone or in a batch, and its
 * acknowledgement read. Static functions: each program compiles its own copy.
 */
#ifndef SANDBOX_KIT_NETLINK_H
#define SANDBOX_KIT_NETLINK_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <net/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#define MESSAGE_SIZE 1024

struct message {
  struct nlmsghdr header;
  char body[MESSAGE_SIZE];
};

static unsigned seq;

/* A request of `type` with the given flags, its family header (`fixed`, `size` bytes) copied after the netlink one. */
static void start(struct message *m, int type, int flags, const void *fixed, size_t size) {
  memset(m, 0, sizeof(*m));
  m->header.nlmsg_len = NLMSG_LENGTH(size);
  m->header.nlmsg_type = type;
  m->header.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
  m->header.nlmsg_seq = ++seq;
  memcpy(NLMSG_DATA(&m->header), fixed, size);
}

/* Appends an attribute; answers where it starts (a nest is closed by `end`). Exits on overflow (a bug, not input). */
static struct rtattr *put(struct message *m, int type, const void *data, size_t size) {
  size_t at = NLMSG_ALIGN(m->header.nlmsg_len);
  if (at + RTA_SPACE(size) > sizeof(*m)) {
    fprintf(stderr, "a netlink request outgrew its buffer\n");
    exit(1);
  }
  struct rtattr *a = (struct rtattr *)((char *)m + at);
  a->rta_type = type;
  a->rta_len = RTA_LENGTH(size);
  if (size > 0) memcpy(RTA_DATA(a), data, size);
  m->header.nlmsg_len = at + RTA_ALIGN(a->rta_len);
  return a;
}

static void put_u8(struct message *m, int type, unsigned char value) { put(m, type, &value, 1); }

static void end(struct message *m, struct rtattr *nest) { nest->rta_len = (char *)m + m->header.nlmsg_len - (char *)nest; }

#define MAX_BATCH 4

/*
 * Sends `count` (at most MAX_BATCH) messages in one datagram on `sock` and reads the acknowledgements of those asking
 * for one (the first error ends the wait): 0, or the kernel's errno.
 */
static int send_all(int sock, struct message **messages, int count) {
  static char out[MAX_BATCH * sizeof(struct message)];
  size_t length = 0;
  unsigned waiting[MAX_BATCH];
  int awaited = 0;
  if (count > MAX_BATCH) return EINVAL;
  for (int i = 0; i < count; i++) {
    memcpy(out + length, messages[i], messages[i]->header.nlmsg_len);
    length += NLMSG_ALIGN(messages[i]->header.nlmsg_len);
    if (messages[i]->header.nlmsg_flags & NLM_F_ACK) waiting[awaited++] = messages[i]->header.nlmsg_seq;
  }
  struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
  if (sendto(sock, out, length, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) return errno;
  char reply[8192];
  while (awaited > 0) {
    ssize_t n = recv(sock, reply, sizeof(reply), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    for (struct nlmsghdr *h = (struct nlmsghdr *)reply; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_type != NLMSG_ERROR) continue;
      int err = -((struct nlmsgerr *)NLMSG_DATA(h))->error;
      if (err != 0) return err;
      for (int i = 0; i < awaited; i++)
        if (waiting[i] == h->nlmsg_seq) waiting[i] = waiting[--awaited];
    }
  }
  return 0;
}

/* Sends one request on `sock` and reads its acknowledgement: 0, or the kernel's errno. */
static int call_on(int sock, struct message *m) { return send_all(sock, &m, 1); }

/* A link request on the link `index` (0: a new link). */
static void link_request(struct message *m, int index, int flags) {
  struct ifinfomsg info = {.ifi_family = AF_UNSPEC, .ifi_index = index};
  start(m, RTM_NEWLINK, flags, &info, sizeof(info));
}

/* Sets IFF_UP on the link `index`: 0, or the kernel's errno. */
static int link_up(int sock, int index) {
  struct message m;
  struct ifinfomsg up = {.ifi_family = AF_UNSPEC, .ifi_index = index, .ifi_flags = IFF_UP, .ifi_change = IFF_UP};
  start(&m, RTM_NEWLINK, 0, &up, sizeof(up));
  return call_on(sock, &m);
}

#endif
