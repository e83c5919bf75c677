/* triskel avx2 backend (AVX2, FMA, BMI2; no AVX-512): primes q < 2^62, four
 * 64-bit lanes per ymm.
 *
 * Two arithmetics: for q < 2^50 the NTT, mul and mul_acc run in double
 * precision with FMA (exact, see the FMA sections below: about a third of
 * the instructions); for larger q, and for add/sub/neg/mul_scalar, 64-bit
 * integer lanes:
 *
 * AVX2 has no 64-bit multiply, unsigned 64-bit min or compare, so:
 * - products are built from 32-bit limbs with vpmuludq (low 32 bits of each
 *   lane times low 32 bits), x = x1*2^32 + x0;
 * - "subtract k when x >= k" for x < 2k, k < 2^63 is d = x - k, which is
 *   below 2^63 when x >= k and wraps to at least 2^64 - k > 2^63 otherwise,
 *   so d's sign bit picks x or d (vblendvpd).
 *
 * Products by a known constant w (twiddles, scalars) use the 64-bit Shoup
 * companion c = floor(w * 2^64 / q). For x < 4q:
 *     h = c1*x1 + (c0*x1 >> 32) + (c1*x0 >> 32)
 * is floor(c*x / 2^64) minus 0, 1 or 2 (the low halves of the cross
 * products and c0*x0 are left out), and
 *     r = x*w - h*q mod 2^64
 *       = w0*x0 - h0*q0 + ((w0*x1 + w1*x0 - h0*q1 - h1*q0) << 32)
 * is in [0, 4q); one conditional subtraction of 2q brings it to [0, 2q).
 * The cross products w0*x1 + w1*x0 and h0*q1 + h1*q0 count only mod 2^32:
 * one vpmulld each (w and q held with their dwords swapped) gives both.
 * 5 vpmuludq + 2 vpmulld + 11 shifts/adds/masks + 2 for the correction.
 *
 * Products of two variables (mul, mul_acc): the 128-bit a*b from four
 * vpmuludq, Barrett with L = bit length of q, mu = floor(2^(L + 63) / q)
 * (from the modulus' floor(2^128 / q)): c1 = (a*b) >> (L - 1) < 2^63,
 * h = floor(c1 * mu / 2^64) or one less, r = a*b - h*q mod 2^64 in [0, 4q),
 * then conditional subtractions of 2q and q.
 *
 * The NTT runs the portable algorithm stage by stage (same tables, no plan
 * tables of its own): stages with distance t >= 4 broadcast one twiddle per
 * block; the two stages t = 2 and t = 1 run on 8 coefficients held in two
 * registers, rearranged with vperm2i128 and vpunpck{l,h}qdq so that the
 * t = 1 twiddles are 4 consecutive table entries and the t = 2 ones two
 * entries each repeated (vpermq).
 *
 * Registers: ymm0..3 data, ymm4..7 and ymm12 temporaries, ymm8..11 the
 * twiddle (w, w dwords swapped, c, c1), ymm13 = 2q, ymm14 = q dwords
 * swapped, ymm15 = q.
 *
 * The key-switching kernels (end of the file) follow the same split: the
 * lazy dot product and base conversion sum exactly reduced products in
 * doubles when every prime is below 2^50, else 32-bit-limb partial products
 * in three 64-bit columns; automorphism_coeff gathers
 * (vpgatherqq), automorphism_ntt copies with scalar loads.
 */
        .intel_syntax noprefix

#include "entry.inc"

        .section .rodata
        .balign 32
.Llanes:
        .quad 0, 1, 2, 3
.Lhigh_dwords:
        .quad 0xffffffff00000000, 0xffffffff00000000
        .quad 0xffffffff00000000, 0xffffffff00000000
.Llow_dwords:
        .quad 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff
        .text

/* ymm15 = q, ymm14 = q with its dwords swapped (q >> 32 in the low dword of
 * each lane, as vpmuludq reads it; q0 in the high one), ymm13 = 2q */
.macro SETUP_MOD m
        vpbroadcastq ymm15, qword ptr [\m]
        vpshufd ymm14, ymm15, 0xb1
        vpbroadcastq ymm13, qword ptr [\m+24]
.endm

/* x = x - k when x >= k, for x < 2k and k < 2^63. Clobbers ymm4. */
.macro SUB_IF_GE x, k
        vpsubq  ymm4, \x, \k
        vblendvpd \x, ymm4, \x, ymm4
.endm

/* The twiddle at [w] with its companion at [c], broadcast to every lane:
 * ymm8 = w, ymm9 = w with its dwords swapped, ymm10 = c, ymm11 = c >> 32
 * (the high dword broadcast serves as well: vpmuludq reads only the low
 * dword). */
.macro TW_BCAST w, c
        vpbroadcastq ymm8, qword ptr [\w]
        vpshufd ymm9, ymm8, 0xb1
        vpbroadcastq ymm10, qword ptr [\c]
        vpbroadcastd ymm11, dword ptr [\c+4]
.endm

/* ymm8..11 from a vector of twiddles in ymm8 and of companions in ymm10. */
.macro TW_SPLIT
        vpshufd ymm9, ymm8, 0xb1
        vpsrlq  ymm11, ymm10, 32
.endm

/* Adds (the sum of the two dwords of m, mod 2^32) << 32 to x: the cross
 * products of a 64-bit product's low word, as vpmulld leaves them in m's
 * dwords. Clobbers m and t. */
.macro ADD_CROSS x, m, t
        vpsllq  \t, \m, 32
        vpand   \m, \m, [rip + .Lhigh_dwords]
        vpaddq  \x, \x, \t
        vpaddq  \x, \x, \m
.endm

/* h = the low 64 bits of h*q (ymm15 = q, ymm14 = q with its dwords
 * swapped): h0*q0 + ((h1*q0 + h0*q1) << 32), the cross products from one
 * vpmulld (low 32 bits of each dword product). Clobbers t1, t2. */
.macro LOW_HQ h, t1, t2
        vpmulld \t1, \h, ymm14         // [h0*q1, h1*q0]
        vpmuludq \h, \h, ymm15
        ADD_CROSS \h, \t1, \t2
.endm

/* dst = src * w mod q in [0, 2q) for src < 4q (dst may be src); the twiddle
 * operands W, WS (w with its dwords swapped), C, CH may be memory. The
 * cross products of x*w and h*q come from one vpmulld each, subtracted
 * dword by dword (only their sum mod 2^32 counts). Clobbers ymm4..7. */
.macro SHOUP dst, src, W=ymm8, WS=ymm9, C=ymm10, CH=ymm11
        vpsrlq  ymm4, \src, 32
        vpmuludq ymm5, ymm4, \C
        vpmuludq ymm6, \src, \CH
        vpmuludq ymm7, ymm4, \CH
        vpsrlq  ymm5, ymm5, 32
        vpsrlq  ymm6, ymm6, 32
        vpaddq  ymm7, ymm7, ymm5
        vpaddq  ymm7, ymm7, ymm6        // h
        vpmulld ymm5, \src, \WS         // [x0*w1, x1*w0]
        vpmulld ymm6, ymm7, ymm14       // [h0*q1, h1*q0]
        vpmuludq \dst, \src, \W
        vpmuludq ymm7, ymm7, ymm15
        vpsubd  ymm5, ymm5, ymm6
        vpsubq  \dst, \dst, ymm7
        ADD_CROSS \dst, ymm5, ymm6       // [0, 4q)
        SUB_IF_GE \dst, ymm13
.endm

/* Forward (Cooley-Tukey, Harvey) on x, y in [0, 4q):
 * u = x reduced to [0, 2q), v = y*w in [0, 2q); x = u + v, y = u + 2q - v. */
.macro BF_FWD x, y
        SHOUP   \y, \y
        SUB_IF_GE \x, ymm13
        vpaddq  ymm12, \x, ymm13
        vpaddq  \x, \x, \y
        vpsubq  \y, ymm12, \y
.endm

/* BF_FWD for x already below 2q (the first stage: inputs are reduced), so
 * without the conditional subtraction of 2q. */
.macro BF_FWD_FIRST x, y
        SHOUP   \y, \y
        vpaddq  ymm12, \x, ymm13
        vpaddq  \x, \x, \y
        vpsubq  \y, ymm12, \y
.endm

/* Inverse (Gentleman-Sande) on x, y in [0, 2q):
 * x = x + y reduced to [0, 2q), y = (x - y + 2q) * w in [0, 2q). */
.macro BF_INV x, y
        vpsubq  ymm12, \x, \y
        vpaddq  ymm12, ymm12, ymm13
        vpaddq  \x, \x, \y
        SUB_IF_GE \x, ymm13
        SHOUP   \y, ymm12
.endm

/* One radix-2 stage of distance t >= 4 (r10 = t, r9 = number of blocks m,
 * twiddle of block i at [rdx + 8*(m + i)], companion (or w/q) at [r14 + ...]) over
 * the array at rsi. Clobbers rax, rbx, r11, r12. */
.macro STAGE butterfly, twiddle=TW_BCAST
        lea     r12, [r10 * 8]          // t in bytes
        mov     rax, rsi                // x of block i
        xor     r11, r11                // i
91:     lea     rbx, [r9 + r11]
        \twiddle rdx+rbx*8, r14+rbx*8
        lea     rbx, [rax + r12]        // end of the x half
92:     vmovdqu ymm0, [rax]
        vmovdqu ymm1, [rax + r12]
        \butterfly ymm0, ymm1
        vmovdqu [rax], ymm0
        vmovdqu [rax + r12], ymm1
        add     rax, 32
        cmp     rax, rbx
        jb      92b
        add     rax, r12                // skip the y half
        inc     r11
        cmp     r11, r9
        jb      91b
.endm

/* The stages with t >= 4 of a forward transform of size n = rcx: t = n/2
 * down to 4, m = n/(2t) blocks; the first one (t = n/2 >= 512) with the
 * butterfly \first, for reduced inputs. Leaves r9 = n/4. */
.macro FORWARD_STAGES first, butterfly, twiddle
        mov     r9, 1                   // m
        mov     r10, rcx
        shr     r10, 1                  // t
        STAGE   \first, \twiddle
        shl     r9, 1
        shr     r10, 1
93:     cmp     r10, 4
        jb      94f
        STAGE   \butterfly, \twiddle
        shl     r9, 1
        shr     r10, 1
        jmp     93b
94:
.endm

/* The middle stages of an inverse transform: t = 4 .. n/4 (the last one,
 * t = n/2, carries n^-1 and is the caller's). */
.macro INVERSE_STAGES butterfly, twiddle=TW_BCAST
        mov     r9, rcx
        shr     r9, 3                   // m
        mov     r10, 4                  // t
93:     cmp     r9, 2
        jb      94f
        STAGE   \butterfly, \twiddle
        shr     r9, 1
        shl     r10, 1
        jmp     93b
94:
.endm

.macro SAVE_REGS
        push    rbx
        push    r12
        push    r13
        push    r14
.endm

.macro RESTORE_REGS_RET
        vzeroupper
        pop     r14
        pop     r13
        pop     r12
        pop     rbx
        ret
.endm

/* ymm2 = [e0 e1 e4 e5], ymm3 = [e2 e3 e6 e7] from ymm0 = [e0..e3],
 * ymm1 = [e4..e7], and the same map back from ymm2, ymm3 to ymm0, ymm1. */
.macro SPLIT_HALVES
        vperm2i128 ymm2, ymm0, ymm1, 0x20
        vperm2i128 ymm3, ymm0, ymm1, 0x31
.endm
.macro JOIN_HALVES
        vperm2i128 ymm0, ymm2, ymm3, 0x20
        vperm2i128 ymm1, ymm2, ymm3, 0x31
.endm
/* ymm0 = [e0 e2 e4 e6], ymm1 = [e1 e3 e5 e7] from ymm2 = [e0 e1 e4 e5],
 * ymm3 = [e2 e3 e6 e7], and the same map back. */
.macro SPLIT_PAIRS
        vpunpcklqdq ymm0, ymm2, ymm3
        vpunpckhqdq ymm1, ymm2, ymm3
.endm
.macro JOIN_PAIRS
        vpunpcklqdq ymm2, ymm0, ymm1
        vpunpckhqdq ymm3, ymm0, ymm1
.endm

        .text

/* The two in-register stages walk groups of 8 coefficients (rax, up to
 * rbx) with r9 = n/4: the t = 2 twiddles of group g at r8 = &w[n/4 + 2g]
 * (companions at r11), the t = 1 ones at r12 = &w[n/2 + 4g] (r13). */
.macro GROUPS_BEGIN
        lea     r8, [rdx + r9 * 8]
        lea     r11, [r14 + r9 * 8]
        lea     r12, [rdx + rcx * 4]
        lea     r13, [r14 + rcx * 4]
        lea     rbx, [rsi + rcx * 8]
        mov     rax, rsi
.endm
/* Stores ymm0, ymm1 and moves to the next group, back to \loop if any;
 * the t = 2 twiddles (r8, r11) advance by \t2_step bytes. */
.macro GROUPS_NEXT loop, t2_step=16
        vmovdqu [rax], ymm0
        vmovdqu [rax + 32], ymm1
        add     r8, \t2_step
        add     r11, \t2_step
        add     r12, 32
        add     r13, 32
        add     rax, 64
        cmp     rax, rbx
        jb      \loop
.endm
/* Twiddles of the t = 2 stage: [w[2g], w[2g], w[2g+1], w[2g+1]]. */
.macro TW_T2
        vpermq  ymm8, [r8], 0x50
        vpermq  ymm10, [r11], 0x50
        TW_SPLIT
.endm
/* Twiddles of the t = 1 stage: w[4g .. 4g + 3]. */
.macro TW_T1
        vmovdqu ymm8, [r12]
        vmovdqu ymm10, [r13]
        TW_SPLIT
.endm

/* void triskel_avx2_ntt_forward(const triskel_ntt_plan *plan (rdi), uint64_t *a (rsi)) */
FUNC triskel_avx2_ntt_forward
        cmp     qword ptr [rdi + 120], 0
        jne     triskel_avx2_fma_ntt_forward
        SAVE_REGS
        SETUP_MOD rdi + 16
        mov     rcx, [rdi]              // n
        mov     rdx, [rdi + 56]         // fwd
        mov     r14, [rdi + 64]         // fwd_shoup
        FORWARD_STAGES BF_FWD_FIRST, BF_FWD, TW_BCAST
        // t = 2 (twiddles fwd[n/4 + 2g], fwd[n/4 + 2g + 1] for group g of 8),
        // then t = 1 (fwd[n/2 + 4g .. n/2 + 4g + 3]) and the full reduction,
        // in two passes: in one loop the dependency chain of a group filled
        // Zen 3's FP scheduler and groups hardly overlapped (llvm-mca znver3:
        // 32 cycles per group, against 2 x 12 in two loops).
        GROUPS_BEGIN
2:      vmovdqu ymm0, [rax]
        vmovdqu ymm1, [rax + 32]
        SPLIT_HALVES
        TW_T2
        BF_FWD  ymm2, ymm3
        JOIN_HALVES
        GROUPS_NEXT 2b
        GROUPS_BEGIN
3:      vmovdqu ymm0, [rax]
        vmovdqu ymm1, [rax + 32]
        SPLIT_HALVES
        SPLIT_PAIRS
        TW_T1
        BF_FWD  ymm0, ymm1
        SUB_IF_GE ymm0, ymm13
        SUB_IF_GE ymm1, ymm13
        SUB_IF_GE ymm0, ymm15
        SUB_IF_GE ymm1, ymm15
        JOIN_PAIRS
        JOIN_HALVES
        GROUPS_NEXT 3b
        RESTORE_REGS_RET
ENDFUNC triskel_avx2_ntt_forward

/* void triskel_avx2_ntt_inverse(const triskel_ntt_plan *plan (rdi), uint64_t *a (rsi)) */
FUNC triskel_avx2_ntt_inverse
        cmp     qword ptr [rdi + 120], 0
        jne     triskel_avx2_fma_ntt_inverse
        SAVE_REGS
        push    rbp
        mov     rbp, rsp
        sub     rsp, 128
        and     rsp, -32
        SETUP_MOD rdi + 16
        mov     rcx, [rdi]              // n
        mov     rdx, [rdi + 72]         // inv
        mov     r14, [rdi + 80]         // inv_shoup
        // t = 1 (inv[n/2 + 4g .. + 3]) and t = 2 (inv[n/4 + 2g], repeated)
        // on groups of 8.
        mov     r9, rcx
        shr     r9, 2                   // n/4
        GROUPS_BEGIN
1:      vmovdqu ymm0, [rax]
        vmovdqu ymm1, [rax + 32]
        SPLIT_HALVES
        SPLIT_PAIRS
        TW_T1
        BF_INV  ymm0, ymm1
        JOIN_PAIRS
        TW_T2
        BF_INV  ymm2, ymm3
        JOIN_HALVES
        GROUPS_NEXT 1b
        // Middle stages t = 4 .. n/4: m = n/(2t) blocks, twiddle inv[m + i].
        INVERSE_STAGES BF_INV
        // Last stage (t = n/2) with n^-1 folded in, fully reduced; the
        // second twiddle (n^-1 * inv[1]) is read from the stack.
        TW_BCAST rdi+104, rdi+112
        vmovdqa [rsp], ymm8
        vmovdqa [rsp + 32], ymm9
        vmovdqa [rsp + 64], ymm10
        vmovdqa [rsp + 96], ymm11
        TW_BCAST rdi+88, rdi+96
        lea     r12, [rcx * 4]          // n/2 in bytes
        mov     rax, rsi
        lea     rbx, [rsi + r12]
4:      vmovdqu ymm0, [rax]
        vmovdqu ymm1, [rax + r12]
        vpaddq  ymm2, ymm0, ymm1
        vpsubq  ymm3, ymm0, ymm1
        vpaddq  ymm3, ymm3, ymm13
        SHOUP   ymm0, ymm2
        SHOUP   ymm1, ymm3, [rsp], [rsp+32], [rsp+64], [rsp+96]
        SUB_IF_GE ymm0, ymm15
        SUB_IF_GE ymm1, ymm15
        vmovdqu [rax], ymm0
        vmovdqu [rax + r12], ymm1
        add     rax, 32
        cmp     rax, rbx
        jb      4b
        vzeroupper
        mov     rsp, rbp
        pop     rbp
        pop     r14
        pop     r13
        pop     r12
        pop     rbx
        ret
ENDFUNC triskel_avx2_ntt_inverse

/* The NTT in double precision for q < 2^50 (the plan then has an avx2_aux,
 * kernels-c/src/x86_64/backends.c): coefficients are held as doubles, exact
 * integers of magnitude below 2^51, in the array itself between the first
 * and the last pass. With w (exact) and wq = w/q (rounded) per twiddle:
 *     h = round(y * wq)         (|y| < 2^52: off y*w/q by at most 1/2 + 1/2)
 *     P = fl(y*w), L = y*w - P  (exact, FMA)
 *     T = fma(-h, q, P)         (P - h*q = r - L is an integer below 2^51,
 *     r = T + L                 so both steps are exact)
 * gives r = y*w - h*q exactly, |r| <= q, for every |y| < 2^52: wq is within
 * 2^-54 of w/q (w < q), so y*wq within 1/4 of y*w/q, and the product's
 * rounding (|y*wq| < 2^52) adds at most 1/4 more; y*w < 2^102 leaves
 * |L| <= 2^48, and |r - L| < 2^51 is an integer. The chain from y to r is
 * mul, round, FMA, add (13 cycles on Zen 3; it was 16 with h*q split into
 * H + L instead of y*w: the NTT loops are bound by their chains' latency as
 * much as by the FP pipes). x is brought to
 * |x| <= q/2 + 1 the same way with 1/q.
 * The forward transform reduces x only after fwd_lazy stages that skip it
 * (and in the t = 2 one), K = floor((2^52 - 1) / q) - 2 (2 for q near 2^50,
 * 14 for q < 2^48, every stage for 40-bit primes): a stage that skips it
 * adds at most q to the largest magnitude, one that reduces leaves at most
 * 3q/2 + 1 <= 2q, and the first stage leaves 2q, so j skipping stages leave
 * at most (2 + j)q <= (2 + K)q < 2^52: within FMUL's and FRED's ranges, and
 * every sum an exact integer below 2^53. The inverse transform reduces
 * x + y after inv_lazy stages that skip it, K = floor(log2((2^52 - 1) / q))
 * - 1 (1 for q near 2^50): the first pass leaves |.| <= q, a stage that
 * skips doubles the bound, one that reduces brings it back to q (x - y
 * through FMUL), so x + y and x - y stay within 2^(K+1) q < 2^52 on the way
 * into FRED, FMUL and the last stage. The schedule changes no result: every
 * step is exact. Rounding to
 * the nearest integer is one vroundpd (it was an add and a subtract of
 * 1.5 * 2^52, the same integer: on Zen 3 both use the two FP add pipes).
 * Per 4 butterflies: 2 mul, 2 FMA, 1 round, 3 add/sub (and a third of a
 * reduction: mul, round, FMA), against 7 integer multiplies and 18 other
 * ops in the integer path. The stage t = 2 reads its twiddles as vectors
 * from the aux tables (a vpermq of each pair cost 4-5 % of the forward).
 *
 * Registers: ymm8 = w, ymm9 = wq, ymm11 = 2^52 (whose bits also convert
 * integers below 2^52 to and from doubles), ymm13 = 2^52 + q, ymm14 = 1/q,
 * ymm15 = q, ymm7 = q in integer lanes, ymm4..6 temporaries. */
        .section .rodata
        .balign 8
.Ltwo52:
        .quad   0x4330000000000000      // 2^52
.Lone:
        .double 1.0
        .text

.macro FMA_SETUP aux
        vbroadcastsd ymm15, qword ptr [\aux + 32]
        vbroadcastsd ymm14, qword ptr [\aux + 40]
        vbroadcastsd ymm11, qword ptr [rip + .Ltwo52]
        vaddpd  ymm13, ymm11, ymm15     // 2^52 + q
        vpbroadcastq ymm7, qword ptr [rdi + 16] // q as integers
.endm

/* y * w - h*q (h = round(y * wq)) for |y| < 2^52 in two exact parts:
 * \t = P - h*q and \y = y*w - P (y is overwritten), P = fl(y*w). So the
 * chain to the sum is mul, round, FMA (10 cycles on Zen 3): the product's
 * low part L = y*w - P is formed beside it. Clobbers ymm4. */
.macro FMUL_PARTS t, y, W=ymm8, WQ=ymm9
        vmulpd  ymm4, \y, \WQ
        vmulpd  \t, \y, \W             // P
        vroundpd ymm4, ymm4, 8          // h
        vfmsub132pd \y, \t, \W         // L = y*w - P
        vfnmadd231pd \t, ymm4, ymm15    // T = P - h*q
.endm

/* dst = src * w mod q, |dst| <= q, for |src| < 2^52 (W and WQ may be
 * memory). Clobbers src, ymm4, ymm5. */
.macro FMUL dst, src, W=ymm8, WQ=ymm9
        FMUL_PARTS ymm5, \src, \W, \WQ
        vaddpd  \dst, ymm5, \src
.endm

/* x = x - round(x/q)*q, |x| <= q/2 after. Clobbers ymm4. */
.macro FRED x
        vmulpd  ymm4, \x, ymm14
        vroundpd ymm4, ymm4, 8
        vfnmadd231pd \x, ymm4, ymm15
.endm

/* x to [0, q) and to its integer bits. Clobbers ymm4. */
.macro FTO_INT x
        FRED    \x
        vxorpd  ymm4, ymm4, ymm4
        vcmppd  ymm4, \x, ymm4, 1       // x < 0
        vandpd  ymm4, ymm4, ymm15
        vaddpd  \x, \x, ymm4
        vaddpd  \x, \x, ymm11
        vpxor   \x, \x, ymm11
.endm

/* x (an integer, |x| < q) to its residue in [0, q) as integer bits:
 * x + 2^52 + q (ymm13) is exact, below 2^53, with x + q < 2q in its low
 * bits; one integer subtraction of q (ymm7) when x + q >= q. Half the
 * chain of FTO_INT's rounding and sign test. Clobbers ymm4. */
.macro FSMALL_TO_INT x
        vaddpd  \x, \x, ymm13
        vpxor   \x, \x, ymm11
        SUB_IF_GE \x, ymm7
.endm

/* dst = src * w mod q in [0, q) as integer bits, for |src| < 2^52: FMUL's
 * r, |r| < q (the bound on h is strict: y*wq is within 1/4 of y*w/q
 * strictly), with 2^52 + q added to L beside the chain (L + 2^52 + q and
 * r + 2^52 + q are integers below 2^53: exact). Clobbers src, ymm4, ymm5. */
.macro FMUL_TO_INT dst, src, W=ymm8, WQ=ymm9
        FMUL_PARTS ymm5, \src, \W, \WQ
        vaddpd  \src, \src, ymm13
        vaddpd  \dst, ymm5, \src
        vpxor   \dst, \dst, ymm11
        SUB_IF_GE \dst, ymm7
.endm

/* Integers below 2^52 to doubles. */
.macro FROM_INT x, two52=ymm11
        vpor    \x, \x, \two52
        vsubpd  \x, \x, \two52
.endm

/* Cooley-Tukey: v = y*w, x reduced; x = x + v, y = x - v (|.| <= 3q/2 + 1). */
.macro FBF_FWD x, y, W=ymm8, WQ=ymm9
        FRED    \x
        FBF_FWD_LAZY \x, \y, \W, \WQ
.endm

/* The same without reducing x (|x| + q after). */
.macro FBF_FWD_LAZY x, y, W=ymm8, WQ=ymm9
        FMUL_PARTS ymm5, \y, \W, \WQ
        vaddpd  ymm5, ymm5, \y
        vsubpd  \y, \x, ymm5
        vaddpd  \x, \x, ymm5
.endm

/* Gentleman-Sande: x = x + y reduced, y = (x - y) * w. */
.macro FBF_INV x, y, W=ymm8, WQ=ymm9
        vsubpd  ymm6, \x, \y
        vaddpd  \x, \x, \y
        FRED    \x
        FMUL    \y, ymm6, \W, \WQ
.endm

/* The same without reducing x + y (2 max(|x|, |y|) after). */
.macro FBF_INV_LAZY x, y, W=ymm8, WQ=ymm9
        vsubpd  ymm6, \x, \y
        vaddpd  \x, \x, \y
        FMUL    \y, ymm6, \W, \WQ
.endm

.macro FTW_BCAST w, wq
        vbroadcastsd ymm8, qword ptr [\w]
        vbroadcastsd ymm9, qword ptr [\wq]
.endm
/* The t = 2 twiddles as vectors (r8, r11 in the aux tables *_t2, *_t2q):
 * FMA_GROUPS_BEGIN before the loop, 32 bytes per group. */
.macro FMA_GROUPS_BEGIN t2_offset
        GROUPS_BEGIN
        mov     r11, [rdi + 120]        // aux
        mov     r8, [r11 + \t2_offset]
        mov     r11, [r11 + \t2_offset + 8]
.endm
.macro FTW_T2
        vmovupd ymm8, [r8]
        vmovupd ymm9, [r11]
.endm
.macro FTW_T1
        vmovupd ymm8, [r12]
        vmovupd ymm9, [r13]
.endm

/* (plan rdi, a rsi), reached by a jump from triskel_avx2_ntt_forward */
        .balign 32
triskel_avx2_fma_ntt_forward:
        SAVE_REGS
        mov     r8, [rdi + 120]         // aux
        FMA_SETUP r8
        mov     rcx, [rdi]              // n
        mov     rdx, [r8]               // w
        mov     r14, [r8 + 8]           // w/q
        // The stages t = n/2 .. 4 (log n - 2 of them) in pairs, from
        // integers in the first pass; for an odd log n the first stage
        // (t = n/2, twiddle w[1]) alone first. Stage s (from 0) reduces x
        // when s = 2 mod 3, so the pairs (s, s + 1) cycle through lazy-lazy
        // (s = 0 mod 3), reduce-lazy (2) and lazy-reduce (1).
        FTW_BCAST rdx+8, r14+8
        lea     r12, [rcx * 4]          // n/2 in bytes
        mov     rax, rsi
        lea     rbx, [rsi + r12]
1:      vmovdqu ymm0, [rax]
        vmovdqu ymm1, [rax + r12]
        FROM_INT ymm0
        FROM_INT ymm1
        FBF_FWD_LAZY ymm0, ymm1
        vmovupd [rax], ymm0
        vmovupd [rax + r12], ymm1
        add     rax, 32
        cmp     rax, rbx
        jb      1b
        // The other stages with t >= 4: x reduced after fwd_lazy stages
        // that skip it (r13 counts them down).
        mov     r9, 2                   // m
        mov     r10, rcx
        shr     r10, 2                  // t
        mov     r13, [r8 + 112]         // fwd_lazy
81:     cmp     r10, 4
        jb      82f
        test    r13, r13
        jz      83f
        STAGE   FBF_FWD_LAZY, FTW_BCAST
        dec     r13
        jmp     84f
83:     STAGE   FBF_FWD, FTW_BCAST
        mov     r13, [r8 + 112]
84:     shl     r9, 1
        shr     r10, 1
        jmp     81b
82:
        // t = 2 and t = 1 in registers (as in the integer path), then the
        // reduction to [0, q) and back to integers in a pass of its own: in
        // the same loop the dependency chain of one group (about 80 cycles)
        // filled Zen 3's FP scheduler, and groups hardly overlapped.
        mov     r9, rcx
        shr     r9, 2                   // n/4
        FMA_GROUPS_BEGIN 80
4:      vmovupd ymm0, [rax]
        vmovupd ymm1, [rax + 32]
        SPLIT_HALVES
        FTW_T2
        FBF_FWD ymm2, ymm3
        SPLIT_PAIRS
        FTW_T1
        FBF_FWD_LAZY ymm0, ymm1
        JOIN_PAIRS
        JOIN_HALVES
        GROUPS_NEXT 4b, 32
        mov     rax, rsi
5:      vmovupd ymm0, [rax]
        vmovupd ymm1, [rax + 32]
        FRED    ymm0
        FRED    ymm1
        FSMALL_TO_INT ymm0
        FSMALL_TO_INT ymm1
        vmovdqu [rax], ymm0
        vmovdqu [rax + 32], ymm1
        add     rax, 64
        cmp     rax, rbx
        jb      5b
        RESTORE_REGS_RET

/* (plan rdi, a rsi), reached by a jump from triskel_avx2_ntt_inverse */
        .balign 32
triskel_avx2_fma_ntt_inverse:
        SAVE_REGS
        mov     r8, [rdi + 120]         // aux
        FMA_SETUP r8
        mov     rcx, [rdi]              // n
        mov     rdx, [r8 + 16]          // w
        mov     r14, [r8 + 24]          // w/q
        // t = 1 and t = 2 in registers, from integers.
        mov     r9, rcx
        shr     r9, 2
        FMA_GROUPS_BEGIN 96
1:      vmovdqu ymm0, [rax]
        vmovdqu ymm1, [rax + 32]
        FROM_INT ymm0
        FROM_INT ymm1
        SPLIT_HALVES
        SPLIT_PAIRS
        FTW_T1
        FBF_INV_LAZY ymm0, ymm1
        JOIN_PAIRS
        FTW_T2
        FBF_INV ymm2, ymm3
        JOIN_HALVES
        GROUPS_NEXT 1b, 32
        // The middle stages (t = 4 .. n/4): x + y reduced after inv_lazy
        // stages that skip it (r13 counts them down).
        mov     r9, rcx
        shr     r9, 3                   // m
        mov     r10, 4                  // t
        mov     r8, [rdi + 120]         // aux
        mov     r13, [r8 + 120]         // inv_lazy
83:     cmp     r9, 2
        jb      84f
        test    r13, r13
        jz      85f
        STAGE   FBF_INV_LAZY, FTW_BCAST
        dec     r13
        jmp     86f
85:     STAGE   FBF_INV, FTW_BCAST
        mov     r13, [r8 + 120]
86:     shr     r9, 1
        shl     r10, 1
        jmp     83b
84:
        // Last stage with n^-1 folded in, to [0, q) and integers.
        mov     r8, [rdi + 120]
        vbroadcastsd ymm8, qword ptr [r8 + 48]      // n^-1
        vbroadcastsd ymm9, qword ptr [r8 + 56]      // n^-1 / q
        vbroadcastsd ymm10, qword ptr [r8 + 64]     // n^-1 * inv[1]
        vbroadcastsd ymm12, qword ptr [r8 + 72]     // n^-1 * inv[1] / q
        lea     r12, [rcx * 4]          // n/2 in bytes
        mov     rax, rsi
        lea     rbx, [rsi + r12]
4:      vmovupd ymm0, [rax]
        vmovupd ymm1, [rax + r12]
        vaddpd  ymm2, ymm0, ymm1
        vsubpd  ymm3, ymm0, ymm1
        FMUL_TO_INT ymm0, ymm2
        FMUL_TO_INT ymm1, ymm3, ymm10, ymm12
        vmovdqu [rax], ymm0
        vmovdqu [rax + r12], ymm1
        add     rax, 32
        cmp     rax, rbx
        jb      4b
        RESTORE_REGS_RET

/* Element-wise loop: ymm0 = a[i] (rsi), ymm1 = b[i] (rdx) when nsrc >= 2,
 * ymm2 = out[i] (rdi) when nsrc == 3; the body leaves the result in ymm0,
 * stored to out[i]; it may clobber ymm1..7 and ymm12. The tail (len mod 4)
 * uses masked loads and stores (vpmaskmovq: lanes past the end are neither
 * read nor written). Clobbers rax, r10, r11. */
.macro TAIL_MASK reg
        vmovq   xmm\reg, r11
        vpbroadcastq ymm\reg, xmm\reg
        vpcmpgtq ymm\reg, ymm\reg, [rip + .Llanes]
.endm

.macro ELEMENTWISE body, nsrc, len
        xor     r10, r10
        mov     r11, \len
        and     r11, -4
        shl     r11, 3
        cmp     r10, r11
        jae     2f
1:      vmovdqu ymm0, [rsi + r10]
.if \nsrc >= 2
        vmovdqu ymm1, [rdx + r10]
.endif
.if \nsrc >= 3
        vmovdqu ymm2, [rdi + r10]
.endif
        \body
        vmovdqu [rdi + r10], ymm0
        add     r10, 32
        cmp     r10, r11
        jb      1b
2:      mov     r11, \len
        and     r11, 3
        jz      3f
        TAIL_MASK 3
        vpmaskmovq ymm0, ymm3, [rsi + r10]
.if \nsrc >= 2
        vpmaskmovq ymm1, ymm3, [rdx + r10]
.endif
.if \nsrc >= 3
        vpmaskmovq ymm2, ymm3, [rdi + r10]
.endif
        \body
        TAIL_MASK 1
        vpmaskmovq [rdi + r10], ymm1, ymm0
3:      vzeroupper
        ret
.endm

.macro BODY_ADD
        vpaddq  ymm0, ymm0, ymm1
        SUB_IF_GE ymm0, ymm15
.endm

/* a - b, plus q when negative (|a - b| < q < 2^62: the sign bit tells). */
.macro BODY_SUB
        vpsubq  ymm3, ymm0, ymm1
        vpaddq  ymm5, ymm3, ymm15
        vblendvpd ymm0, ymm3, ymm5, ymm3
.endm

.macro BODY_NEG
        vpxor   ymm3, ymm3, ymm3
        vpcmpeqq ymm3, ymm3, ymm0
        vpsubq  ymm0, ymm15, ymm0
        vpandn  ymm0, ymm3, ymm0
.endm

.macro BODY_MUL_SCALAR
        SHOUP   ymm0, ymm0
        SUB_IF_GE ymm0, ymm15
.endm

/* Barrett constants of the modulus at [m] (clobbers rax, r9, r10, r11):
 * xmm9 = L - 1, xmm8 = 65 - L, ymm11 = mu = floor(2^128 / q) >> (65 - L),
 * ymm10 = mu >> 32, ymm12 = 2^32 - 1 in each lane. */
.macro BARRETT_SETUP m
        bsr     rax, [\m]
        inc     rax                     // L
        lea     r10, [rax - 1]
        vmovq   xmm9, r10
        mov     r10, 65
        sub     r10, rax                // s = 65 - L, 3..63
        vmovq   xmm8, r10
        mov     r11, [\m + 16]
        shrx    r11, r11, r10
        mov     rax, 64
        sub     rax, r10
        mov     r9, [\m + 8]
        shlx    r9, r9, rax
        or      r11, r9
        vmovq   xmm11, r11
        vpbroadcastq ymm11, xmm11
        shr     r11, 32
        vmovq   xmm10, r11
        vpbroadcastq ymm10, xmm10
        vpcmpeqd ymm12, ymm12, ymm12
        vpsrlq  ymm12, ymm12, 32
.endm

/* ymm0 = ymm0 * ymm1 mod q (temporaries ymm1, ymm3..7) */
.macro BODY_MUL
        vpsrlq  ymm3, ymm0, 32
        vpsrlq  ymm4, ymm1, 32
        vpmuludq ymm5, ymm0, ymm1       // a0*b0
        vpmuludq ymm6, ymm0, ymm4       // a0*b1
        vpmuludq ymm7, ymm3, ymm1       // a1*b0
        vpmuludq ymm3, ymm3, ymm4       // a1*b1
        vpsrlq  ymm4, ymm5, 32
        vpand   ymm1, ymm6, ymm12
        vpaddq  ymm4, ymm4, ymm1
        vpand   ymm1, ymm7, ymm12
        vpaddq  ymm4, ymm4, ymm1        // middle column, < 3 * 2^32
        vpsrlq  ymm6, ymm6, 32
        vpsrlq  ymm7, ymm7, 32
        vpaddq  ymm3, ymm3, ymm6
        vpaddq  ymm3, ymm3, ymm7
        vpsrlq  ymm1, ymm4, 32
        vpaddq  ymm3, ymm3, ymm1        // high word of a*b
        vpsllq  ymm4, ymm4, 32
        vpand   ymm5, ymm5, ymm12
        vpor    ymm4, ymm4, ymm5        // low word of a*b
        vpsllq  ymm3, ymm3, xmm8
        vpsrlq  ymm5, ymm4, xmm9
        vpor    ymm3, ymm3, ymm5        // c1 = a*b >> (L - 1)
        vpsrlq  ymm5, ymm3, 32
        vpmuludq ymm6, ymm5, ymm11      // mu0*c1_1
        vpmuludq ymm7, ymm3, ymm10      // mu1*c1_0
        vpmuludq ymm5, ymm5, ymm10      // mu1*c1_1
        vpand   ymm1, ymm6, ymm12
        vpaddq  ymm1, ymm1, ymm7
        vpsrlq  ymm1, ymm1, 32
        vpsrlq  ymm6, ymm6, 32
        vpaddq  ymm5, ymm5, ymm6
        vpaddq  ymm5, ymm5, ymm1        // h
        LOW_HQ  ymm5, ymm6, ymm7
        vpsubq  ymm0, ymm4, ymm5        // [0, 4q)
        SUB_IF_GE ymm0, ymm13
        SUB_IF_GE ymm0, ymm15
.endm

.macro BODY_MUL_ACC
        BODY_MUL
        vpaddq  ymm0, ymm0, ymm2
        SUB_IF_GE ymm0, ymm15
.endm

/* mul and mul_acc for q < 2^50 in double precision: H = fl(a*b),
 * L = a*b - H (FMA, exact), h = round(H / q) (within 1 of a*b/q: the
 * relative errors of H, 1/q and the product are 2^-53 each, a*b/q < 2^50),
 * r = (H - h*q) + L = a*b - h*q (FMA, exact: |r| < q), plus q when
 * negative. ymm15 = q, ymm14 = 1/q (one division per call, none per
 * element), ymm11 = 2^52. */
.macro FMOD_SETUP m
        vcvtsi2sd xmm15, xmm15, qword ptr [\m]
        vmovsd  xmm14, qword ptr [rip + .Lone]
        vdivsd  xmm14, xmm14, xmm15
        vbroadcastsd ymm15, xmm15
        vbroadcastsd ymm14, xmm14
        vbroadcastsd ymm11, qword ptr [rip + .Ltwo52]
.endm

/* x = x + q when x < 0 (clobbers ymm4). */
.macro FADD_IF_NEG x
        vxorpd  ymm4, ymm4, ymm4
        vcmppd  ymm4, \x, ymm4, 1
        vandpd  ymm4, ymm4, ymm15
        vaddpd  \x, \x, ymm4
.endm

/* a = a * b mod q as a double in (-q, q), from integers a, b < 2^50
 * (clobbers b, t1, t2) */
.macro FPRODUCT a=ymm0, b=ymm1, t1=ymm3, t2=ymm4
        FROM_INT \a
        FROM_INT \b
        vmulpd  \t1, \a, \b              // H
        vfmsub213pd \a, \b, \t1          // L
        vmulpd  \t2, \t1, ymm14
        vroundpd \t2, \t2, 8             // h
        vfnmadd231pd \t1, \t2, ymm15      // H - h*q
        vaddpd  \a, \a, \t1
.endm

.macro BODY_FMUL
        FPRODUCT
        FADD_IF_NEG ymm0
        vaddpd  ymm0, ymm0, ymm11
        vpxor   ymm0, ymm0, ymm11
.endm

/* r + acc in (-q, 2q): minus q when >= q, plus q when negative. */
.macro BODY_FMUL_ACC
        FPRODUCT
        FROM_INT ymm2
        vaddpd  ymm0, ymm0, ymm2
        vcmppd  ymm4, ymm0, ymm15, 13   // >= q
        vandpd  ymm4, ymm4, ymm15
        vsubpd  ymm0, ymm0, ymm4
        FADD_IF_NEG ymm0
        vaddpd  ymm0, ymm0, ymm11
        vpxor   ymm0, ymm0, ymm11
.endm

/* (out rdi, a rsi, b rdx, len rcx, m r8) */
FUNC triskel_avx2_add
        SETUP_MOD r8
        ELEMENTWISE BODY_ADD, 2, rcx
ENDFUNC triskel_avx2_add

/* (out rdi, a rsi, b rdx, len rcx, m r8) */
FUNC triskel_avx2_sub
        SETUP_MOD r8
        ELEMENTWISE BODY_SUB, 2, rcx
ENDFUNC triskel_avx2_sub

/* (out rdi, a rsi, len rdx, m rcx) */
FUNC triskel_avx2_neg
        SETUP_MOD rcx
        ELEMENTWISE BODY_NEG, 1, rdx
ENDFUNC triskel_avx2_neg

/* (out rdi, a rsi, b rdx, len rcx, m r8) */
FUNC triskel_avx2_mul
        mov     rax, [r8]
        shr     rax, 50
        jz      8f
        SETUP_MOD r8
        BARRETT_SETUP r8
        ELEMENTWISE BODY_MUL, 2, rcx
8:      FMOD_SETUP r8
        ELEMENTWISE BODY_FMUL, 2, rcx
ENDFUNC triskel_avx2_mul

/* (acc rdi, a rsi, b rdx, len rcx, m r8) */
FUNC triskel_avx2_mul_acc
        mov     rax, [r8]
        shr     rax, 50
        jz      8f
        SETUP_MOD r8
        BARRETT_SETUP r8
        ELEMENTWISE BODY_MUL_ACC, 3, rcx
8:      FMOD_SETUP r8
        ELEMENTWISE BODY_FMUL_ACC, 3, rcx
ENDFUNC triskel_avx2_mul_acc

/* (out rdi, a rsi, s rdx, s_shoup rcx, len r8, m r9) */
FUNC triskel_avx2_mul_scalar
        SETUP_MOD r9
        vmovq   xmm8, rdx
        vpbroadcastq ymm8, xmm8
        vmovq   xmm10, rcx
        vpbroadcastq ymm10, xmm10
        TW_SPLIT
        ELEMENTWISE BODY_MUL_SCALAR, 1, r8
ENDFUNC triskel_avx2_mul_scalar


/* x mod q in [0, 4q) for any 64-bit x (dst differs from src): x - h*q with
 * h = floor(x * C / 2^64) minus 0..3, C = floor(2^64 / q) = CH*2^32 + C0
 * (the estimate with the exact C is floor(x / q) or one short, and the
 * three partial products leave out at most 2 more). Clobbers ymm4..7. */
.macro MOD_APPROX dst, src, C, CH
        vpsrlq  ymm4, \src, 32
        vpmuludq ymm5, ymm4, \C
        vpmuludq ymm6, \src, \CH
        vpmuludq ymm7, ymm4, \CH
        vpsrlq  ymm5, ymm5, 32
        vpsrlq  ymm6, ymm6, 32
        vpaddq  ymm7, ymm7, ymm5
        vpaddq  ymm7, ymm7, ymm6        // h
        LOW_HQ  ymm7, ymm4, ymm5
        vpsubq  \dst, \src, ymm7
.endm

/* The single-prime lift (base_convert with k = 1 and (Q/q_0) mod p = 1):
 * out = (y mod p) - (y > q_0/2 ? vq_mod_p[1] : vq_mod_p[0]) mod p, or
 * y mod p when vq_mod_p is NULL. ymm8/9 = floor(2^64 / p) (the high word of
 * the modulus' floor(2^128 / p)) and its high half, ymm10 = q_0 / 2,
 * ymm11/12 = vq_mod_p[0]/[1]. y < q_0 < 2^62, so a signed compare serves. */
.macro BODY_LIFT
        MOD_APPROX ymm1, ymm0, ymm8, ymm9
        SUB_IF_GE ymm1, ymm13
        SUB_IF_GE ymm1, ymm15
        vpcmpgtq ymm2, ymm0, ymm10
        vblendvpd ymm2, ymm11, ymm12, ymm2
        vpaddq  ymm1, ymm1, ymm15
        vpsubq  ymm0, ymm1, ymm2
        SUB_IF_GE ymm0, ymm15
.endm

/* The lift in double precision when q_0 and p are below 2^50: y mod p by
 * FRED (exact, |r| <= p/2), to [0, p), minus vq (ymm8/ymm9 as doubles,
 * picked by the integer compare y > q_0 / 2 = ymm10), to [0, p). */
.macro BODY_FLIFT
        vpcmpgtq ymm2, ymm0, ymm10
        FROM_INT ymm0
        FRED    ymm0
        FADD_IF_NEG ymm0
        vblendvpd ymm2, ymm8, ymm9, ymm2
        vsubpd  ymm0, ymm0, ymm2
        FADD_IF_NEG ymm0
        vaddpd  ymm0, ymm0, ymm11
        vpxor   ymm0, ymm0, ymm11
.endm

/* ymm10 = q_0 / 2 and the two corrections vq_mod_p[0], [1] (0 when the
 * table at rcx has none) in \vq0, \vq1 (clobbers rax). */
.macro LIFT_SETUP vq0, vq1
        mov     rax, [rcx + 8]
        mov     rax, [rax]
        shr     rax, 1
        vmovq   xmm10, rax
        vpbroadcastq ymm10, xmm10
        vpxor   \vq0, \vq0, \vq0
        vpxor   \vq1, \vq1, \vq1
        mov     rax, [rcx + 32]
        test    rax, rax
        jz      6f
        vpbroadcastq \vq0, qword ptr [rax]
        vpbroadcastq \vq1, qword ptr [rax + 8]
6:
.endm

/* void triskel_avx2_lift{,_fma}(u64 *out rdi, const u64 *y rsi, size_t len
 *     rdx, const triskel_convert_table *t rcx, m r8); the C wrapper checks
 * that t is a single-prime lift (and for _fma that q_0, p < 2^50). */
FUNC triskel_avx2_lift
        SETUP_MOD r8
        vpbroadcastq ymm8, qword ptr [r8 + 8]
        vpbroadcastd ymm9, dword ptr [r8 + 12]
        LIFT_SETUP ymm11, ymm12
        ELEMENTWISE BODY_LIFT, 1, rdx
ENDFUNC triskel_avx2_lift

FUNC triskel_avx2_lift_fma
        FMOD_SETUP r8
        LIFT_SETUP ymm8, ymm9
        FROM_INT ymm8
        FROM_INT ymm9
        ELEMENTWISE BODY_FLIFT, 1, rdx
ENDFUNC triskel_avx2_lift_fma

/* void triskel_avx2_automorphism_ntt(u64 *out rdi, const u64 *a rsi,
 *     const u32 *perm rdx, size_t n rcx): out[j] = a[perm[j]], four values
 * per iteration with scalar loads and stores, the indices read two per
 * load. Scalar, not vpgatherdq: on Zen 3 the gather ran slower than
 * portable's plain loop (0.75-0.94x at N = 4096 and 16384), while this loop
 * is bound by the 2 loads and 1 store per value that any version needs. */
FUNC triskel_avx2_automorphism_ntt
        xor     eax, eax
        mov     r8, rcx
        and     r8, -4
        jz      2f
1:      mov     r9, [rdx + rax*4]
        mov     r10, [rdx + rax*4 + 8]
        mov     r11d, r9d
        shr     r9, 32
        mov     r11, [rsi + r11*8]
        mov     r9, [rsi + r9*8]
        mov     [rdi + rax*8], r11
        mov     [rdi + rax*8 + 8], r9
        mov     r11d, r10d
        shr     r10, 32
        mov     r11, [rsi + r11*8]
        mov     r10, [rsi + r10*8]
        mov     [rdi + rax*8 + 16], r11
        mov     [rdi + rax*8 + 24], r10
        add     rax, 4
        cmp     rax, r8
        jb      1b
        GATHER_TAIL_RET
ENDFUNC triskel_avx2_automorphism_ntt

/* void triskel_avx2_automorphism_coeff_raw(u64 *out rdi, const u64 *a rsi,
 *     u64 ginv rdx, size_t n rcx, m r8): X -> X^g as a gather, from
 * ginv = g^-1 mod 2n: out[e] = a[J] when J = e ginv mod 2n < n, else
 * -a[J - n] mod q (as for AVX-512F, avx512.S). n is a power of two >= 8
 * (the C wrapper checks), so 2n <= 2^32 and ginv * lane fits vpmuludq. */
FUNC triskel_avx2_automorphism_coeff_raw
        vpbroadcastq ymm15, qword ptr [r8]      // q
        lea     rax, [rcx*2 - 1]
        vmovq   xmm14, rax
        vpbroadcastq ymm14, xmm14               // 2n - 1
        lea     rax, [rcx - 1]
        vmovq   xmm13, rax
        vpbroadcastq ymm13, xmm13               // n - 1
        vmovq   xmm12, rcx
        vpbroadcastq ymm12, xmm12               // n
        vmovq   xmm1, rdx
        vpbroadcastq ymm1, xmm1
        vpmuludq ymm0, ymm1, [rip + .Llanes]
        vpand   ymm0, ymm0, ymm14               // J of lanes e = 0..3
        shl     rdx, 2
        vmovq   xmm11, rdx
        vpbroadcastq ymm11, xmm11               // 4 ginv: J of e + 4
        vpxor   ymm10, ymm10, ymm10
        xor     eax, eax
1:      vpand   ymm1, ymm0, ymm13
        vpand   ymm2, ymm0, ymm12
        vpcmpeqq ymm2, ymm2, ymm10              // J < n
        vpcmpeqd ymm3, ymm3, ymm3
        vpxor   ymm4, ymm4, ymm4
        vpgatherqq ymm4, [rsi + ymm1*8], ymm3
        vpcmpeqq ymm5, ymm4, ymm10              // -0 = 0
        vpsubq  ymm6, ymm15, ymm4
        vpandn  ymm6, ymm5, ymm6
        vblendvpd ymm4, ymm6, ymm4, ymm2
        vmovdqu [rdi + rax*8], ymm4
        vpaddq  ymm0, ymm0, ymm11
        vpand   ymm0, ymm0, ymm14
        add     rax, 4
        cmp     rax, rcx
        jb      1b
        vzeroupper
        ret
ENDFUNC triskel_avx2_automorphism_coeff_raw

/* The lazy dot product, 4 values per block, the terms' pointer arrays at
 * rsi (a) and r10 (b), count rcx, block byte offset r12. The C wrapper
 * passes a length that is a multiple of 4 and runs the tail portable.
 *
 * q >= 2^50, 32-bit limbs: with x = x1*2^32 + x0 (x1 < 2^30), each product
 * a*b = p00 + (p01 + p10)*2^32 + p11*2^64 goes into three columns
 *     c0 += lo32(p00), c1 += hi32(p00) + lo32(p01 + p10),
 *     c2 += hi32(p01 + p10) + p11  (< 2^60 per term),
 * so 8 terms fit in 64-bit lanes. Every 8 terms and at the end the sum
 * X = hi*2^64 + lo is reduced as Shoup(hi, 2^64 mod q) + (lo mod q) (two
 * products by constants), to [0, 4q), and split back into c0, c1. */
.macro DOT_TERM_INT
        vpsrlq  ymm5, ymm3, 32
        vpsrlq  ymm6, ymm4, 32
        vpmuludq ymm7, ymm3, ymm4       // p00
        vpmuludq ymm3, ymm3, ymm6       // p01
        vpmuludq ymm6, ymm5, ymm6       // p11
        vpmuludq ymm5, ymm5, ymm4       // p10
        vpaddq  ymm3, ymm3, ymm5        // p01 + p10 < 2^63
        vpaddq  ymm2, ymm2, ymm6
        vpand   ymm4, ymm7, [rip + .Llow_dwords]
        vpaddq  ymm0, ymm0, ymm4
        vpsrlq  ymm7, ymm7, 32
        vpaddq  ymm1, ymm1, ymm7
        vpand   ymm4, ymm3, [rip + .Llow_dwords]
        vpaddq  ymm1, ymm1, ymm4
        vpsrlq  ymm3, ymm3, 32
        vpaddq  ymm2, ymm2, ymm3
.endm

/* ymm0 = (c2*2^64 + c1*2^32 + c0) mod q in [0, 4q), from ymm0..2; ymm8..11
 * = 2^64 mod q as a Shoup twiddle, [rsp], [rsp + 32] = floor(2^64 / q) and
 * its high half. Clobbers ymm1..7. */
.macro DOT_FOLD_INT
        vpsrlq  ymm3, ymm0, 32
        vpaddq  ymm1, ymm1, ymm3
        vpand   ymm0, ymm0, [rip + .Llow_dwords]
        vpsrlq  ymm3, ymm1, 32
        vpaddq  ymm2, ymm2, ymm3        // hi
        vpsllq  ymm1, ymm1, 32
        vpor    ymm0, ymm0, ymm1        // lo
        SHOUP   ymm1, ymm2, ymm8, ymm9, ymm10, ymm11
        MOD_APPROX ymm3, ymm0, [rsp], [rsp + 32]
        SUB_IF_GE ymm3, ymm13
        vpaddq  ymm0, ymm3, ymm1
.endm

/* q < 2^50, double precision: each product reduced as in FPRODUCT to
 * |r| < q (exact), summed exactly in a double (|sum| < 8q < 2^53 over 7
 * terms after a reduction to |sum| <= q/2 by FRED). */
.macro DOT_TERM_FMA
        FPRODUCT ymm3, ymm4, ymm5, ymm6
        vaddpd  ymm0, ymm0, ymm3
.endm

/* ymm4 = the second factor of term rbx: b[rbx] at byte offset r12 (dot),
 * or the broadcast constant qhat_mod_p[rbx] (base_convert). */
.macro DOT_LOAD_B
        mov     rax, [r10 + rbx*8]
        vmovdqu ymm4, [rax + r12]
.endm
.macro CONVERT_LOAD_QHAT
        vpbroadcastq ymm4, qword ptr [r10 + rbx*8]
        test    r14, r14
        jz      71f
        CONVERT_V_TERM
71:
.endm

/* The block loop of the dot product and base conversion: ymm3 = term rbx
 * of the pointer array rsi at byte offset r12, ymm4 from \load (which may
 * also add to ymm12, zeroed per block, and clobber ymm5, ymm6); \term adds
 * their product to the sums, \fold reduces them every \chunk terms, \final
 * leaves the result in [0, q) in ymm0. r8 = length in bytes, rcx = terms. */
.macro DOT_LOOP term, fold, chunk, final, load=DOT_LOAD_B
        xor     r12, r12
1:      vpxor   ymm0, ymm0, ymm0
        vpxor   ymm1, ymm1, ymm1
        vpxor   ymm2, ymm2, ymm2
        vpxor   ymm12, ymm12, ymm12
        xor     ebx, ebx
        mov     r13d, \chunk
2:      mov     r11, [rsi + rbx*8]
        vmovdqu ymm3, [r11 + r12]
        \load
        \term
        inc     rbx
        cmp     rbx, rcx
        jae     3f
        dec     r13d
        jnz     2b
        \fold
        mov     r13d, \chunk
        jmp     2b
3:      \final
        vmovdqu [rdi + r12], ymm0
        add     r12, 32
        cmp     r12, r8
        jb      1b
.endm

.macro DOT_REFOLD_INT
        DOT_FOLD_INT
        vpsrlq  ymm1, ymm0, 32
        vpand   ymm0, ymm0, [rip + .Llow_dwords]
        vpxor   ymm2, ymm2, ymm2
.endm

.macro DOT_FINAL_INT
        DOT_FOLD_INT
        SUB_IF_GE ymm0, ymm13
        SUB_IF_GE ymm0, ymm15
.endm

.macro DOT_REFOLD_FMA
        FRED    ymm0
.endm

.macro DOT_FINAL_FMA
        FTO_INT ymm0
.endm

/* The constants of DOT_FOLD_INT for the modulus at [m] (clobbers rax, rdx,
 * r11, ymm4; [rsp] must be 64 bytes, 32-byte aligned). */
.macro LAZY_SETUP_INT m
        SETUP_MOD \m
        mov     r11, [\m]
        mov     edx, 1
        xor     eax, eax
        div     r11                     // rdx = 2^64 mod q
        vmovq   xmm8, rdx
        vpbroadcastq ymm8, xmm8
        vpshufd ymm9, ymm8, 0xb1
        xor     eax, eax
        div     r11                     // rax = floor((2^64 mod q) 2^64 / q)
        vmovq   xmm10, rax
        vpbroadcastq ymm10, xmm10
        vpsrlq  ymm11, ymm10, 32
        vpbroadcastq ymm4, qword ptr [\m + 8]
        vmovdqa [rsp], ymm4
        vpsrlq  ymm4, ymm4, 32
        vmovdqa [rsp + 32], ymm4
.endm

/* void triskel_avx2_dot_raw(u64 *out rdi, const u64 *const *a rsi,
 *     const u64 *const *b rdx, size_t count rcx (>= 1), size_t len r8
 *     (a multiple of 4), m r9) */
FUNC triskel_avx2_dot_raw
        SAVE_REGS
        push    rbp
        mov     rbp, rsp
        sub     rsp, 64
        and     rsp, -32
        mov     r10, rdx
        shl     r8, 3
        jz      9f
        mov     rax, [r9]
        shr     rax, 50
        jz      8f
        LAZY_SETUP_INT r9
        DOT_LOOP DOT_TERM_INT, DOT_REFOLD_INT, 8, DOT_FINAL_INT
        jmp     9f
8:      FMOD_SETUP r9
        cmp     rcx, 2
        jne     7f
        // Two terms (TFHE's external product: the key rows of one output):
        // the four pointers held in registers, no loop over terms, and the
        // two reduced products (each in (-q, q)) added directly.
        mov     rax, [rsi]
        mov     r11, [rsi + 8]
        mov     rbx, [r10]
        mov     r13, [r10 + 8]
        xor     r12, r12
        lea     r14, [r8 - 32]          // pairs of blocks below this
        jmp     5f
4:      vmovdqu ymm0, [rax + r12]
        vmovdqu ymm1, [rbx + r12]
        vmovdqu ymm2, [r11 + r12]
        vmovdqu ymm7, [r13 + r12]
        vmovdqu ymm8, [rax + r12 + 32]
        vmovdqu ymm9, [rbx + r12 + 32]
        vmovdqu ymm10, [r11 + r12 + 32]
        vmovdqu ymm12, [r13 + r12 + 32]
        FPRODUCT ymm0, ymm1, ymm3, ymm4
        FPRODUCT ymm8, ymm9, ymm5, ymm6
        FPRODUCT ymm2, ymm7, ymm3, ymm4
        FPRODUCT ymm10, ymm12, ymm5, ymm6
        vaddpd  ymm0, ymm0, ymm2
        vaddpd  ymm8, ymm8, ymm10
        FTO_INT ymm0
        FTO_INT ymm8
        vmovdqu [rdi + r12], ymm0
        vmovdqu [rdi + r12 + 32], ymm8
        add     r12, 64
5:      cmp     r12, r14
        jb      4b
        cmp     r12, r8
        jae     9f
6:      vmovdqu ymm0, [rax + r12]
        vmovdqu ymm1, [rbx + r12]
        vmovdqu ymm2, [r11 + r12]
        vmovdqu ymm7, [r13 + r12]
        FPRODUCT ymm0, ymm1, ymm3, ymm4
        FPRODUCT ymm2, ymm7, ymm5, ymm6
        vaddpd  ymm0, ymm0, ymm2
        FTO_INT ymm0
        vmovdqu [rdi + r12], ymm0
        jmp     9f
7:      DOT_LOOP DOT_TERM_FMA, DOT_REFOLD_FMA, 7, DOT_FINAL_FMA
9:      vzeroupper
        mov     rsp, rbp
        pop     rbp
        pop     r14
        pop     r13
        pop     r12
        pop     rbx
        ret
ENDFUNC triskel_avx2_dot_raw

/* The overflow count's double sum of the exact conversion, accumulated in
 * ymm12 while the lazy sum reads y = ymm3 (term rbx, inv_q at rdx), in the
 * same order of operations as portable's: (double)(int64_t)y =
 * fl(y1 * 2^32 + y0) (one rounding, FMA; y1 the signed high dword), times
 * inv_q[i], added left to right. Clobbers ymm5, ymm6. */
.macro CONVERT_V_TERM
        vpsrlq  ymm5, ymm3, 32
        vpand   ymm6, ymm3, [rip + .Llow_dwords]
        vpor    ymm6, ymm6, [rip + .Ltwo52_4]
        vsubpd  ymm6, ymm6, [rip + .Ltwo52_4]     // y0
        vpxor   ymm5, ymm5, [rip + .Ltwo52_sign4] // 2^52 + y1 + 2^31 (mod 2^32)
        vsubpd  ymm5, ymm5, [rip + .Ltwo52_sign4] // y1 as a signed dword
        vfmadd132pd ymm5, ymm6, [rip + .Ltwo32_4] // (double)y
        vbroadcastsd ymm6, qword ptr [rdx + rbx*8]
        vmulpd  ymm5, ymm5, ymm6
        vaddpd  ymm12, ymm12, ymm5
.endm

/* Base conversion (HPS) after the lazy sum: ymm0 = r in [0, p) becomes
 * (r - vq_mod_p[v]) mod p (vq_mod_p at r14, or nothing when r14 = 0), with
 * v = [y_0 > q_0 / 2] for one source prime, else from the double sum s in
 * ymm12 (CONVERT_V_TERM) plus 1/2, clamped to [0, k] before truncation (so
 * that any input indexes inside vq_mod_p). Table r15, pointers rsi, count
 * rcx, byte offset r12, the modulus at r9; clobbers rax, r11, ymm1..7. */
.macro CONVERT_CORRECT
        test    r14, r14
        jz      79f
        vbroadcastsd ymm2, qword ptr [rip + .Ltwo52]
        cmp     rcx, 1
        jne     77f
        mov     r11, [rsi]
        vmovdqu ymm3, [r11 + r12]
        mov     rax, [r15 + 8]
        mov     rax, [rax]
        shr     rax, 1
        vmovq   xmm5, rax
        vpbroadcastq ymm5, xmm5
        vpbroadcastq ymm6, qword ptr [rip + .Lsign]
        vpxor   ymm3, ymm3, ymm6        // unsigned order as signed
        vpxor   ymm5, ymm5, ymm6
        vpcmpgtq ymm1, ymm3, ymm5
        vpsrlq  ymm1, ymm1, 63          // v
        jmp     78f
77:     vbroadcastsd ymm5, qword ptr [rip + .Lhalf]
        vaddpd  ymm1, ymm12, ymm5
        vxorpd  ymm5, ymm5, ymm5
        vmaxpd  ymm1, ymm1, ymm5
        vcvtsi2sd xmm5, xmm5, rcx
        vbroadcastsd ymm5, xmm5
        vminpd  ymm1, ymm1, ymm5
        vroundpd ymm1, ymm1, 3          // truncate
        vaddpd  ymm1, ymm1, ymm2
        vpxor   ymm1, ymm1, ymm2        // v
78:     vpcmpeqd ymm5, ymm5, ymm5
        vpxor   ymm3, ymm3, ymm3
        vpgatherqq ymm3, [r14 + ymm1*8], ymm5
        vpbroadcastq ymm6, qword ptr [r9]
        vpaddq  ymm0, ymm0, ymm6
        vpsubq  ymm0, ymm0, ymm3
        SUB_IF_GE ymm0, ymm6
79:
.endm

.macro CONVERT_FINAL_INT
        DOT_FINAL_INT
        CONVERT_CORRECT
.endm

.macro CONVERT_FINAL_FMA
        DOT_FINAL_FMA
        CONVERT_CORRECT
.endm

/* void triskel_avx2_base_convert_{int,fma}(u64 *out rdi,
 *     const u64 *const *y rsi, size_t len rdx (a multiple of 4),
 *     const triskel_convert_table *t rcx, m r8): the lazy sum of the dot
 * product with the broadcast constants qhat_mod_p, then CONVERT_CORRECT.
 * The fma version needs every source prime and p below 2^50 (the C wrapper
 * checks). */
.macro CONVERT_FUNC name, setup, term, fold, chunk, final
FUNC \name
        SAVE_REGS
        push    r15
        push    rbp
        mov     rbp, rsp
        sub     rsp, 64
        and     rsp, -32
        mov     r15, rcx
        mov     r9, r8
        mov     r8, rdx
        shl     r8, 3
        jz      9f
        mov     rcx, [r15]              // k
        mov     r10, [r15 + 24]         // qhat_mod_p
        mov     r14, [r15 + 32]         // vq_mod_p or NULL
        \setup  r9
        mov     rdx, [r15 + 16]         // inv_q
        DOT_LOOP \term, \fold, \chunk, \final, CONVERT_LOAD_QHAT
9:      vzeroupper
        mov     rsp, rbp
        pop     rbp
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbx
        ret
ENDFUNC \name
.endm

CONVERT_FUNC triskel_avx2_base_convert_int, LAZY_SETUP_INT, DOT_TERM_INT, DOT_REFOLD_INT, 8, CONVERT_FINAL_INT
CONVERT_FUNC triskel_avx2_base_convert_fma, FMOD_SETUP, DOT_TERM_FMA, DOT_REFOLD_FMA, 7, CONVERT_FINAL_FMA

        .section .rodata
        .balign 8
        .balign 32
.Ltwo32_4:
        .double 4294967296.0, 4294967296.0, 4294967296.0, 4294967296.0
.Ltwo52_sign4:
        .quad   0x4330000080000000, 0x4330000080000000 // 2^52 + 2^31
        .quad   0x4330000080000000, 0x4330000080000000
.Ltwo52_4:
        .quad   0x4330000000000000, 0x4330000000000000
        .quad   0x4330000000000000, 0x4330000000000000
.Lsign:
        .quad   0x8000000000000000
.Lhalf:
        .double 0.5
        .text

        .section .note.GNU-stack, "", @progbits
