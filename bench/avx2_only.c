/* Preloaded by bench/avx2_only.py: the cpuid and xgetbv instructions of one library, each
   replaced there by int3 and nops, trap here and get the CPU's own answer with AVX-512, VNNI,
   AVX-VNNI, bf16 and AMX masked out, so that the library picks the kernels an AVX2-only CPU
   gets. AVX2_SITES="c:OFF,...;x:OFF,..." lists the replaced cpuid (c) and xgetbv (x) sites as
   hex offsets in the library whose path contains AVX2_LIB; any other int3 gets the default
   action. AVX2_VERBOSE set: the number of answers is printed at exit. */
#define _GNU_SOURCE
#include <cpuid.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#define MAX_SITES 256
static unsigned long cpuid_sites[MAX_SITES], xgetbv_sites[MAX_SITES];
static int n_cpuid, n_xgetbv;
static const char *lib_name;
static long traps;

static int listed(unsigned long *sites, int n, unsigned long off) {
    for (int i = 0; i < n; i++) if (sites[i] == off) return 1;
    return 0;
}

/* the feature bits an AVX2-only CPU (Zen 3, Haswell to Comet Lake) does not have */
static void mask_cpuid(unsigned leaf, unsigned sub, unsigned *a, unsigned *b, unsigned *c, unsigned *d) {
    if (leaf == 7 && sub == 0) {
        *b &= ~((1u<<16)|(1u<<17)|(1u<<21)|(1u<<26)|(1u<<27)|(1u<<28)|(1u<<30)|(1u<<31));
        *c &= ~((1u<<1)|(1u<<6)|(1u<<8)|(1u<<11)|(1u<<12)|(1u<<14));
        *d &= ~((1u<<2)|(1u<<3)|(1u<<8)|(1u<<22)|(1u<<23)|(1u<<24)|(1u<<25));
    } else if (leaf == 7 && sub == 1) {
        *a &= ~((1u<<4)|(1u<<5)|(1u<<23));
        *d &= ~((1u<<4)|(1u<<5)|(1u<<10));
    } else if (leaf == 0xd && sub == 0) {
        *a &= ~(0xe0u|0x60000u);
    }
}

static void on_trap(int sig, siginfo_t *si, void *ctx) {
    ucontext_t *uc = ctx;
    greg_t *g = uc->uc_mcontext.gregs;
    uintptr_t site = (uintptr_t)g[REG_RIP] - 1;  /* int3 leaves RIP past itself */
    Dl_info info;
    if (dladdr((void *)site, &info) && info.dli_fname && strstr(info.dli_fname, lib_name)) {
        unsigned long off = site - (uintptr_t)info.dli_fbase;
        if (listed(cpuid_sites, n_cpuid, off)) {
            unsigned a, b, c, d, leaf = (unsigned)g[REG_RAX], sub = (unsigned)g[REG_RCX];
            __cpuid_count(leaf, sub, a, b, c, d);
            mask_cpuid(leaf, sub, &a, &b, &c, &d);
            g[REG_RAX] = a; g[REG_RBX] = b; g[REG_RCX] = c; g[REG_RDX] = d;
            g[REG_RIP] = site + 2; traps++;
            return;
        }
        if (listed(xgetbv_sites, n_xgetbv, off)) {
            unsigned lo, hi, xcr = (unsigned)g[REG_RCX];
            __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(xcr));
            if (xcr == 0) lo &= ~(0xe0u|0x60000u);
            g[REG_RAX] = lo; g[REG_RDX] = hi;
            g[REG_RIP] = site + 3; traps++;
            return;
        }
    }
    signal(SIGTRAP, SIG_DFL);  /* not ours: the default action on return */
}

static void report(void) { if (getenv("AVX2_VERBOSE")) fprintf(stderr, "avx2_only: %ld cpuid and xgetbv answers\n", traps); }

__attribute__((constructor)) static void install(void) {
    const char *spec = getenv("AVX2_SITES");
    lib_name = getenv("AVX2_LIB");
    if (!spec || !lib_name) return;
    char *copy = strdup(spec), *save = NULL;
    for (char *part = strtok_r(copy, ";", &save); part; part = strtok_r(NULL, ";", &save)) {
        unsigned long *sites = part[0] == 'c' ? cpuid_sites : xgetbv_sites;
        int *n = part[0] == 'c' ? &n_cpuid : &n_xgetbv;
        char *save2 = NULL;
        for (char *tok = strtok_r(part + 2, ",", &save2); tok && *n < MAX_SITES; tok = strtok_r(NULL, ",", &save2))
            sites[(*n)++] = strtoul(tok, NULL, 16);
    }
    struct sigaction sa = {0};
    sa.sa_sigaction = on_trap;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGTRAP, &sa, NULL);
    atexit(report);
}
