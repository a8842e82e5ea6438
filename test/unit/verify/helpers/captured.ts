/** Command output captured from Debian 12 hosts (iproute2 6.1, shadowsocks-libev 3.3.5), trimmed to what matters. */

export const SS_LISTENING = `udp   UNCONN 0      0            0.0.0.0:8388       0.0.0.0:*    users:(("ss-server",pid=812,fd=6))
udp   UNCONN 0      0          127.0.0.1:323        0.0.0.0:*    users:(("chronyd",pid=401,fd=5))
tcp   LISTEN 0      1024         0.0.0.0:8388       0.0.0.0:*    users:(("ss-server",pid=812,fd=5))
tcp   LISTEN 0      128          0.0.0.0:22         0.0.0.0:*    users:(("sshd",pid=530,fd=3))
tcp   LISTEN 0      128             [::]:22            [::]:*    users:(("sshd",pid=530,fd=4))
`;

export const SS_UDP_MISSING = `tcp   LISTEN 0      1024         0.0.0.0:8388       0.0.0.0:*    users:(("ss-server",pid=812,fd=5))
tcp   LISTEN 0      128          0.0.0.0:22         0.0.0.0:*    users:(("sshd",pid=530,fd=3))
`;

export const SS_PORT_TAKEN = `tcp   LISTEN 0      4096         0.0.0.0:8388       0.0.0.0:*    users:(("nginx",pid=900,fd=6),("nginx",pid=901,fd=6))
udp   UNCONN 0      0            0.0.0.0:8388       0.0.0.0:*    users:(("ss-server",pid=812,fd=6))
`;

export const LIMITS_51200 = `Limit                     Soft Limit           Hard Limit           Units     
Max cpu time              unlimited            unlimited            seconds   
Max file size             unlimited            unlimited            bytes     
Max data size             unlimited            unlimited            bytes     
Max stack size            8388608              unlimited            bytes     
Max core file size        0                    unlimited            bytes     
Max resident set          unlimited            unlimited            bytes     
Max processes             3794                 3794                 processes 
Max open files            51200                51200                files     
Max locked memory         8388608              8388608              bytes     
Max address space         unlimited            unlimited            bytes     
`;

export const LIMITS_DEFAULT = LIMITS_51200.replace('51200                51200', '1024                 524288');

export const SYSCTL_APPLIED = `net.ipv4.ip_forward = 1
net.core.default_qdisc = fq
net.ipv4.tcp_congestion_control = bbr
net.ipv4.tcp_fastopen = 3
`;

/** Inside a network namespace net.core.default_qdisc does not exist: `sysctl -e` prints nothing for it. */
export const SYSCTL_NAMESPACE = SYSCTL_APPLIED.replace('net.core.default_qdisc = fq\n', '');

/** A host whose global default_qdisc was never changed. */
export const SYSCTL_GLOBAL_PFIFO = SYSCTL_APPLIED.replace('default_qdisc = fq', 'default_qdisc = pfifo_fast');

export const ROUTE_DEFAULT = 'default via 172.31.16.1 dev ens5 proto dhcp src 172.31.16.10 metric 100 \n';

export const TC_MQ_FQ = `qdisc mq 0: root 
qdisc fq 0: parent :2 limit 10000p flow_limit 100p buckets 1024 orphan_mask 1023 quantum 18030b initial_quantum 90150b low_rate_threshold 550Kbit refill_delay 40ms timer_slack 10us horizon 10s horizon_drop 
qdisc fq 0: parent :1 limit 10000p flow_limit 100p buckets 1024 orphan_mask 1023 quantum 18030b initial_quantum 90150b low_rate_threshold 550Kbit refill_delay 40ms timer_slack 10us horizon 10s horizon_drop 
`;

export const TC_PFIFO = 'qdisc pfifo_fast 0: root refcnt 2 bands 3 priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1\n';

export const IP_ADDRS = `1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever
2: ens5    inet 172.31.16.10/20 metric 100 brd 172.31.31.255 scope global dynamic ens5\\       valid_lft 3412sec preferred_lft 3412sec
2: ens5    inet 172.31.16.11/32 scope global ens5\\       valid_lft forever preferred_lft forever
`;

export const IP_ADDRS_LAB = `1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever
5: px0@if6    inet 198.18.0.2/24 scope global px0\\       valid_lft forever preferred_lft forever
`;

/** /proc/<pid>/cmdline shown one argument per line. */
export const CMDLINE_BIND =
  '/usr/bin/ss-server\n-c\n/etc/sandbox-kit/ss-server.json\n--acl\n/etc/sandbox-kit/server.acl\n-b\n172.31.16.11\n';
export const CMDLINE_SHARED = '/usr/bin/ss-server\n-c\n/etc/sandbox-kit/ss-server.json\n--acl\n/etc/sandbox-kit/server.acl\n';
