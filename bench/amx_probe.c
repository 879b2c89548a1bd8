/*
 * Does this machine run Intel AMX as its CPUID says? In one child process per count, loads tile
 * registers 0..k with llama.cpp's AMX tile configuration (tiles 0-1 8 rows, 2-3 16 rows of 32
 * bytes, 4-7 16 rows of 64 bytes; its kernels hold all eight at once) and prints which fault.
 *
 *     gcc -O2 -mamx-tile -mamx-int8 bench/amx_probe.c -o /tmp/amx_probe && /tmp/amx_probe
 *
 * Linux x86-64 only (arch_prctl asks the kernel for the tile state). docs/ARCHITECTURE.md,
 * "llama.cpp's AMX path", records what it printed here and why palinode-vault keeps llama.cpp's
 * weight repacking (its AMX path) off.
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

struct tile_config {
    uint8_t palette_id;
    uint8_t start_row;
    uint8_t reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} __attribute__((packed, aligned(64)));

static int8_t data[16 * 64];

static void load_one(int tile) {
    switch (tile) { /* the tile register is part of the instruction */
        case 0: _tile_loadd(0, data, 64); break;
        case 1: _tile_loadd(1, data, 64); break;
        case 2: _tile_loadd(2, data, 32); break;
        case 3: _tile_loadd(3, data, 32); break;
        case 4: _tile_loadd(4, data, 64); break;
        case 5: _tile_loadd(5, data, 64); break;
        case 6: _tile_loadd(6, data, 64); break;
        case 7: _tile_loadd(7, data, 64); break;
    }
}

/* Loads tiles 0..last in one process: the kernels hold up to eight at once. */
static void load_up_to(int last) {
    struct tile_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette_id = 1;
    for (int t = 0; t < 8; t++) {
        cfg.rows[t] = t < 2 ? 8 : 16;
        cfg.colsb[t] = (t == 2 || t == 3) ? 32 : 64;
    }
    _tile_loadconfig(&cfg);
    for (int tile = 0; tile <= last; tile++) load_one(tile);
    _tile_release();
}

int main(void) {
    unsigned a, b, c, d;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x1d), "c"(1));
    printf("CPUID 0x1D.1: %u tile registers, %u bytes each, %u rows at most\n", b >> 16, a >> 16, c & 0xffff);
    if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) != 0) {
        printf("the kernel refused the AMX tile state: no AMX here\n");
        return 1;
    }
    int faults = 0;
    for (int tile = 0; tile < 8; tile++) {
        pid_t pid = fork();
        if (pid == 0) {
            load_up_to(tile);
            _exit(0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        faults += !ok;
        printf("tiles 0-%d held at once: %s\n", tile, ok ? "ok" : (WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "failed"));
    }
    printf(faults ? "AMX is NOT usable as reported: keep llama.cpp's repacking off\n" : "AMX works as reported\n");
    return faults ? 2 : 0;
}
