/* SPDX-License-Identifier: MIT */
/*
 * A trivial request body for the runtime tests, with the generated one's
 * interface: void body_test(void *regions, uint64_t state[2]). state[0]
 * loop iterations (0: 100) of a few adds and a load/store into the 64 KiB
 * of regions; state[1] keeps the sweep offset between calls.
 */
	.text
	.globl	body_test
	.type	body_test, @function
body_test:
	pushq	%rbx			/* callee-saved, used below */
	movq	(%rsi), %rcx		/* iterations */
	movq	8(%rsi), %rax		/* offset into the regions */
	testq	%rcx, %rcx
	jnz	1f
	movq	$100, %rcx
1:	testq	%rdi, %rdi
	jz	3f
2:	addq	$64, %rax		/* 8 instructions per iteration */
	andq	$0xfff8, %rax
	movq	(%rdi,%rax), %rbx
	addq	%rcx, %rbx
	addq	$3, %rbx
	movq	%rbx, (%rdi,%rax)
	decq	%rcx
	jnz	2b
3:	movq	%rax, 8(%rsi)
	popq	%rbx
	ret
	.size	body_test, .-body_test
	.section .note.GNU-stack,"",@progbits
