/* Wine 8.0 (Debian bookworm) has no bcryptprimitives.dll, and Rust's standard library
 * for Windows imports ProcessPrng from it for random numbers. This stand-in exports
 * ProcessPrng over RtlGenRandom (advapi32's SystemFunction036), which Wine has. It
 * exists only for running Windows builds under that Wine (.ci/windows); Windows itself
 * ships the real DLL. */
#include <windows.h>
#define SystemFunction036 NTAPI SystemFunction036
#include <ntsecapi.h>
#undef SystemFunction036

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!RtlGenRandom(data, n)) {
            return FALSE;
        }
        data += n;
        len -= n;
    }
    return TRUE;
}
