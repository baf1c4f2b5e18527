module github.com/hangarhq/hangar/examples/connectfour

go 1.26.8
