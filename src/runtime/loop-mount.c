/*
 * loop-mount IMAGE DIR: mounts the ext4 image IMAGE on DIR through a loop device, as the kit mounts a sandbox's disk
 * (sandbox-disk.ts): noatime, noinit_itable, the loop device freed by the kernel when its last mount goes
 * (LO_FLAGS_AUTOCLEAR). It does what `mount -t ext4 -o loop,noatime,noinit_itable IMAGE DIR` does, with fewer
 * system calls: util-linux opens every loop device and reads the mount table twice, 17-21 ms a mount with 200
 * sandboxes against 8-11 here (docs/runtime.md, "A disk per sandbox").
 *
 * An image already on a loop device (a disk unmounted lazily while busy stays alive on its device) is mounted from
 * that device again, as `mount -o loop` does: two loop devices on one file would be two ext4 instances writing the
 * same blocks. Such a device is found by its /sys/block/loop<N>/loop/backing_file (the path of the file it is bound
 * to, present only for a bound device; the kit mounts an image only by its own path) and confirmed by the image's
 * device and inode (LOOP_GET_STATUS64). That scan reads every loop device's entry (they persist: hundreds on a busy
 * host, 1.5-3 ms), so it is made only for an image that has been mounted read-write before: ext4 counts such mounts
 * in its superblock, written through the device as the mount is made, and an image never mounted (a new sandbox's,
 * from mkfs) has no ext4 instance anywhere. Otherwise a free device comes from
 * /dev/loop-control (LOOP_CTL_GET_FREE) and is configured in one call (LOOP_CONFIGURE, Linux 5.8); another process
 * may take the same device between the two, which LOOP_CONFIGURE refuses with EBUSY, so it asks again.
 *
 * On any failure what was set up is undone, the reason is printed on stderr and the exit code is 1 (2: usage); 0
 * once DIR shows the image. Run by the kit as root; built by scripts/build-native.ts.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define TRIES 64

/* ext4's superblock, at byte 1024 of the image: its magic, mount count and last mount time (little-endian). */
#define SUPERBLOCK 1024
#define SB_MTIME 0x2C
#define SB_MNT_COUNT 0x34
#define SB_MAGIC 0x38
#define EXT4_MAGIC 0xEF53

static int fail(const char *what, const char *arg, int err) {
  fprintf(stderr, "loop-mount: %s %s: %s\n", what, arg, strerror(err));
  return 1;
}

/*
 * The loop device already bound to `path` (the image's canonical path; `st`, its stat), opened, its /dev path in
 * `device`; -1 when there is none. A device's sysfs backing_file (the file's path now, present only for a bound
 * device) is compared first; only a device that names the image is opened, and its device and inode confirmed.
 */
static int bound_device(const char *path, const struct stat *st, char *device, size_t size) {
  DIR *sys = opendir("/sys/block");
  if (sys == NULL) return -1;
  size_t path_len = strlen(path);
  int found = -1;
  struct dirent *e;
  while (found < 0 && (e = readdir(sys)) != NULL) {
    if (strncmp(e->d_name, "loop", 4) != 0) continue;
    char attr[300];
    snprintf(attr, sizeof attr, "/sys/block/%s/loop/backing_file", e->d_name);
    int a = open(attr, O_RDONLY | O_CLOEXEC);
    if (a < 0) continue; /* not bound */
    char backing[PATH_MAX + 2];
    ssize_t n = read(a, backing, sizeof backing);
    close(a);
    if (n != (ssize_t)path_len + 1 || memcmp(backing, path, path_len) != 0 || backing[path_len] != '\n') continue;
    snprintf(device, size, "/dev/%s", e->d_name);
    int fd = open(device, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    struct loop_info64 info;
    if (ioctl(fd, LOOP_GET_STATUS64, &info) == 0 && info.lo_device == (unsigned long long)st->st_dev && info.lo_inode == (unsigned long long)st->st_ino)
      found = fd;
    else
      close(fd);
  }
  closedir(sys);
  return found;
}

/*
 * Whether the image may have been mounted read-write: anything but an ext4 superblock with a mount count and a last
 * mount time of zero (what mkfs leaves) counts as mounted, so a doubt costs the scan, never a second ext4 instance.
 */
static int ever_mounted(int file) {
  unsigned char sb[SB_MAGIC + 2];
  if (pread(file, sb, sizeof sb, SUPERBLOCK) != (ssize_t)sizeof sb) return 1;
  unsigned magic = sb[SB_MAGIC] | (unsigned)sb[SB_MAGIC + 1] << 8;
  unsigned count = sb[SB_MNT_COUNT] | (unsigned)sb[SB_MNT_COUNT + 1] << 8;
  int stamped = sb[SB_MTIME] | sb[SB_MTIME + 1] | sb[SB_MTIME + 2] | sb[SB_MTIME + 3];
  return magic != EXT4_MAGIC || count != 0 || stamped;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: loop-mount IMAGE DIR\n");
    return 2;
  }
  const char *image = argv[1];
  const char *dir = argv[2];
  int file = open(image, O_RDWR | O_CLOEXEC);
  if (file < 0) return fail("open", image, errno);
  struct stat st;
  if (fstat(file, &st) != 0) return fail("stat", image, errno);
  char canonical[PATH_MAX];
  if (realpath(image, canonical) == NULL) return fail("realpath", image, errno);
  char device[300];
  int bound = ever_mounted(file) ? bound_device(canonical, &st, device, sizeof device) : -1;
  if (bound >= 0) {
    if (mount(device, dir, "ext4", MS_NOATIME, "noinit_itable") == 0) return 0;
    int err = errno;
    close(bound);
    /* ENXIO: the device is being freed (its last mount went a moment ago, the kernel clears it in a work item), so
       no ext4 instance is left on it: a new device is safe. */
    if (err != ENXIO) return fail("mount on", dir, err);
  }
  int control = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
  if (control < 0) return fail("open", "/dev/loop-control", errno);

  struct loop_config config;
  memset(&config, 0, sizeof config);
  config.fd = (unsigned)file;
  config.info.lo_flags = LO_FLAGS_AUTOCLEAR;
  strncpy((char *)config.info.lo_file_name, image, LO_NAME_SIZE - 1);

  int loop = -1;
  for (int i = 0; i < TRIES && loop < 0; i++) {
    int n = ioctl(control, LOOP_CTL_GET_FREE);
    if (n < 0) return fail("LOOP_CTL_GET_FREE", "/dev/loop-control", errno);
    snprintf(device, sizeof device, "/dev/loop%d", n);
    int fd = open(device, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) continue; /* devtmpfs has not made the node yet */
      return fail("open", device, errno);
    }
    if (ioctl(fd, LOOP_CONFIGURE, &config) == 0) {
      loop = fd;
      break;
    }
    int err = errno;
    close(fd);
    if (err != EBUSY) return fail("LOOP_CONFIGURE", device, err);
  }
  if (loop < 0) {
    fprintf(stderr, "loop-mount: no free loop device after %d tries\n", TRIES);
    return 1;
  }
  close(file);
  close(control);

  if (mount(device, dir, "ext4", MS_NOATIME, "noinit_itable") != 0) {
    int err = errno;
    ioctl(loop, LOOP_CLR_FD);
    close(loop);
    return fail("mount on", dir, err);
  }
  /* The mount holds the device now; with AUTOCLEAR it is freed when DIR is unmounted. */
  close(loop);
  return 0;
}
