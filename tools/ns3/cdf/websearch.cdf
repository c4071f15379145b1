# WebSearch flow sizes: bytes, cumulative percent of flows (linear between points).
# Source: the web-search workload of Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010,
# as tabulated for the HPCC paper (Li et al., SIGCOMM 2019) in github.com/alibaba-edu/
# High-Precision-Congestion-Control traffic_gen/WebSearch_distribution.txt. Mean 1.6 MB.
0 0
10000 15
20000 20
30000 30
50000 40
80000 53
200000 60
1000000 70
2000000 80
5000000 90
10000000 97
30000000 100
