/* Wine 8.0 has no bcryptprimitives.dll; Rust's std (>= 1.78) imports ProcessPrng from it for
 * random numbers (HashMap seeds). This stub gives it, on RtlGenRandom (SystemFunction036 of
 * advapi32, which Wine has). For testing under Wine only: never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
