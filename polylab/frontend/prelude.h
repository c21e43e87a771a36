/* polylab's stand-in for the C library headers (see polylab/frontend/preprocess.py): the front end never
   reads the system headers; it needs only the type names that declarations use and a few constants. */
#ifndef POLYLAB_PRELUDE_H
#define POLYLAB_PRELUDE_H
typedef unsigned long size_t;
typedef long ssize_t;
typedef long ptrdiff_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;
typedef long intmax_t;
typedef unsigned long uintmax_t;
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef int wchar_t;
typedef long time_t;
typedef long clock_t;
typedef long off_t;
typedef int pid_t;
typedef struct polylab_FILE FILE;
typedef struct polylab_va_list *va_list;
typedef int omp_lock_t;
#define NULL ((void *) 0)
#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
#define EOF (-1)
#define RAND_MAX 2147483647
#define CLOCKS_PER_SEC 1000000
#define bool _Bool
#define true 1
#define false 0
#define M_PI 3.14159265358979323846
#define M_E 2.7182818284590452354
#endif
