/* SPDX-License-Identifier: MIT */
/*
 * What a system call does, as bits of the syscall description table
 * (syscall_table.h) that the BPF collector also reads (bpf/collector.h):
 * plain defines only, so that clang's BPF target includes it too.
 */
#ifndef DITTO_SYSCALL_BITS_H
#define DITTO_SYSCALL_BITS_H

#define SD_RET_COUNT	0x01	/* non-negative return is a byte/element count */
#define SD_FILE_POS	0x02	/* uses the file position when fd is a regular file */
#define SD_ACCEPT	0x04	/* returns a new connection */
#define SD_CONNECT	0x08	/* opens an outgoing connection */
#define SD_RECV		0x10	/* moves data in */
#define SD_SEND		0x20	/* moves data out */
#define SD_MSGHDR	0x40	/* size = iovecs of the msghdr at size_arg */
#define SD_TIMESPEC	0x80	/* size = ns of the timespec at size_arg */
#define SD_MMSG		0x100	/* size = messages; bytes from mmsghdr at exit */
#define SD_CLOSE	0x200	/* closes fd */
#define SD_KNOWN	0x400	/* the entry describes the syscall (others are zero) */

#endif /* DITTO_SYSCALL_BITS_H */
