/* SPDX-License-Identifier: MIT */
/* x86-64 system call descriptions; see syscall_table.h. */
#include <string.h>

#include "syscall_table.h"

#define NONE -1
/* name, nr, fd, size, iov, iovcnt, flags, offset, bits, class */
#define D(n, nr, fd, sz, iov, cnt, fl, off, bits, cls) \
	{ #n, nr, fd, sz, iov, cnt, fl, off, (bits) | SD_KNOWN, cls }
#define RD (SD_RET_COUNT | SD_RECV)
#define WR (SD_RET_COUNT | SD_SEND)

const struct syscall_desc syscall_table[] = {
	/* data in */
	D(read, 0, 0, 2, NONE, NONE, NONE, NONE, RD | SD_FILE_POS, SC_IO),
	D(readv, 19, 0, NONE, 1, 2, NONE, NONE, RD | SD_FILE_POS, SC_IO),
	D(pread64, 17, 0, 2, NONE, NONE, NONE, 3, RD, SC_IO),
	D(preadv, 295, 0, NONE, 1, 2, NONE, 3, RD, SC_IO),
	D(preadv2, 327, 0, NONE, 1, 2, 5, 3, RD, SC_IO),
	D(recvfrom, 45, 0, 2, NONE, NONE, 3, NONE, RD, SC_NET),
	D(recvmsg, 47, 0, 1, NONE, NONE, 2, NONE, RD | SD_MSGHDR, SC_NET),
	D(recvmmsg, 299, 0, 2, NONE, NONE, 3, NONE, RD | SD_MMSG, SC_NET),
	/* data out */
	D(write, 1, 0, 2, NONE, NONE, NONE, NONE, WR | SD_FILE_POS, SC_IO),
	D(writev, 20, 0, NONE, 1, 2, NONE, NONE, WR | SD_FILE_POS, SC_IO),
	D(pwrite64, 18, 0, 2, NONE, NONE, NONE, 3, WR, SC_IO),
	D(pwritev, 296, 0, NONE, 1, 2, NONE, 3, WR, SC_IO),
	D(pwritev2, 328, 0, NONE, 1, 2, 5, 3, WR, SC_IO),
	D(sendto, 44, 0, 2, NONE, NONE, 3, NONE, WR, SC_NET),
	D(sendmsg, 46, 0, 1, NONE, NONE, 2, NONE, WR | SD_MSGHDR, SC_NET),
	D(sendmmsg, 307, 0, 2, NONE, NONE, 3, NONE, WR | SD_MMSG, SC_NET),
	D(sendfile, 40, 0, 3, NONE, NONE, NONE, NONE, WR, SC_IO),
	D(splice, 275, 0, 4, NONE, NONE, 5, NONE, SD_RET_COUNT, SC_IO),
	/* connections */
	D(accept, 43, 0, NONE, NONE, NONE, NONE, NONE, SD_ACCEPT, SC_NET),
	D(accept4, 288, 0, NONE, NONE, NONE, 3, NONE, SD_ACCEPT, SC_NET),
	D(connect, 42, 0, NONE, NONE, NONE, NONE, NONE, SD_CONNECT, SC_NET),
	D(socket, 41, NONE, NONE, NONE, NONE, 1, NONE, 0, SC_NET),
	D(bind, 49, 0, NONE, NONE, NONE, NONE, NONE, 0, SC_NET),
	D(listen, 50, 0, NONE, NONE, NONE, NONE, NONE, 0, SC_NET),
	D(shutdown, 48, 0, NONE, NONE, NONE, 1, NONE, 0, SC_NET),
	D(setsockopt, 54, 0, NONE, NONE, NONE, 2, NONE, 0, SC_NET),
	D(getsockopt, 55, 0, NONE, NONE, NONE, 2, NONE, 0, SC_NET),
	/* multiplexing: size is the number of fds or events asked for */
	D(epoll_wait, 232, 0, 2, NONE, NONE, NONE, NONE, SD_RET_COUNT, SC_MUX),
	D(epoll_pwait, 281, 0, 2, NONE, NONE, NONE, NONE, SD_RET_COUNT, SC_MUX),
	D(epoll_pwait2, 441, 0, 2, NONE, NONE, NONE, NONE, SD_RET_COUNT, SC_MUX),
	D(epoll_ctl, 233, 0, NONE, NONE, NONE, 1, NONE, 0, SC_MUX),
	D(epoll_create1, 291, NONE, NONE, NONE, NONE, 0, NONE, 0, SC_MUX),
	D(poll, 7, NONE, 1, NONE, NONE, NONE, NONE, SD_RET_COUNT, SC_MUX),
	D(ppoll, 271, NONE, 1, NONE, NONE, NONE, NONE, SD_RET_COUNT, SC_MUX),
	D(select, 23, NONE, 0, NONE, NONE, NONE, NONE, SD_RET_COUNT, SC_MUX),
	D(pselect6, 270, NONE, 0, NONE, NONE, NONE, NONE, SD_RET_COUNT, SC_MUX),
	D(io_uring_enter, 426, 0, 1, NONE, NONE, 3, NONE, SD_RET_COUNT, SC_IO),
	/* synchronisation and sleeping */
	D(futex, 202, NONE, NONE, NONE, NONE, 1, NONE, 0, SC_SYNC),
	D(nanosleep, 35, NONE, 0, NONE, NONE, NONE, NONE, SD_TIMESPEC, SC_SLEEP),
	D(clock_nanosleep, 230, NONE, 2, NONE, NONE, 1, NONE, SD_TIMESPEC, SC_SLEEP),
	D(sched_yield, 24, NONE, NONE, NONE, NONE, NONE, NONE, 0, SC_SLEEP),
	/* files */
	D(open, 2, NONE, NONE, NONE, NONE, 1, NONE, 0, SC_FS),
	D(openat, 257, NONE, NONE, NONE, NONE, 2, NONE, 0, SC_FS),
	D(close, 3, 0, NONE, NONE, NONE, NONE, NONE, SD_CLOSE, SC_FS),
	D(stat, 4, NONE, NONE, NONE, NONE, NONE, NONE, 0, SC_FS),
	D(fstat, 5, 0, NONE, NONE, NONE, NONE, NONE, 0, SC_FS),
	D(lstat, 6, NONE, NONE, NONE, NONE, NONE, NONE, 0, SC_FS),
	D(newfstatat, 262, NONE, NONE, NONE, NONE, 3, NONE, 0, SC_FS),
	D(statx, 332, NONE, NONE, NONE, NONE, 2, NONE, 0, SC_FS),
	D(lseek, 8, 0, NONE, NONE, NONE, 2, NONE, 0, SC_FS),
	D(fsync, 74, 0, NONE, NONE, NONE, NONE, NONE, 0, SC_FS),
	D(fdatasync, 75, 0, NONE, NONE, NONE, NONE, NONE, 0, SC_FS),
	D(ioctl, 16, 0, NONE, NONE, NONE, 1, NONE, 0, SC_OTHER),
	D(fcntl, 72, 0, NONE, NONE, NONE, 1, NONE, 0, SC_OTHER),
	D(eventfd2, 290, NONE, NONE, NONE, NONE, 1, NONE, 0, SC_OTHER),
	D(pipe2, 293, NONE, NONE, NONE, NONE, 1, NONE, 0, SC_OTHER),
	/* memory */
	D(mmap, 9, 4, 1, NONE, NONE, 3, 5, 0, SC_MEM),
	D(munmap, 11, NONE, 1, NONE, NONE, NONE, NONE, 0, SC_MEM),
	D(mprotect, 10, NONE, 1, NONE, NONE, 2, NONE, 0, SC_MEM),
	D(madvise, 28, NONE, 1, NONE, NONE, 2, NONE, 0, SC_MEM),
	D(brk, 12, NONE, NONE, NONE, NONE, NONE, NONE, 0, SC_MEM),
	/* processes and threads */
	D(clone, 56, NONE, NONE, NONE, NONE, 0, NONE, 0, SC_PROC),
	D(clone3, 435, NONE, NONE, NONE, NONE, NONE, NONE, 0, SC_PROC),
	D(fork, 57, NONE, NONE, NONE, NONE, NONE, NONE, 0, SC_PROC),
	D(getpid, 39, NONE, NONE, NONE, NONE, NONE, NONE, 0, SC_OTHER),
	D(gettid, 186, NONE, NONE, NONE, NONE, NONE, NONE, 0, SC_OTHER),
	D(rt_sigaction, 13, NONE, NONE, NONE, NONE, NONE, NONE, 0, SC_OTHER),
	D(rt_sigprocmask, 14, NONE, NONE, NONE, NONE, 0, NONE, 0, SC_OTHER),
	D(getrusage, 98, NONE, NONE, NONE, NONE, NONE, NONE, 0, SC_OTHER),
	D(prctl, 157, NONE, NONE, NONE, NONE, 0, NONE, 0, SC_OTHER),
};

const size_t syscall_table_len = sizeof(syscall_table) / sizeof(syscall_table[0]);

const struct syscall_desc *syscall_by_nr(unsigned nr)
{
	for (size_t i = 0; i < syscall_table_len; i++)
		if (syscall_table[i].nr == nr)
			return &syscall_table[i];
	return NULL;
}

extern const char *const syscall_names[];
extern const size_t syscall_names_len;

const char *syscall_name_of(unsigned nr)
{
	const struct syscall_desc *d = syscall_by_nr(nr);

	if (d)
		return d->name;
	return nr < syscall_names_len ? syscall_names[nr] : NULL;
}

const struct syscall_desc *syscall_by_name(const char *name)
{
	for (size_t i = 0; i < syscall_table_len; i++)
		if (strcmp(syscall_table[i].name, name) == 0)
			return &syscall_table[i];
	return NULL;
}
