/*
 * mempools.h - ctl/mempool's state: torch.npu.MemPool objects by name.
 */
#ifndef NPUMEMFS_MEMPOOLS_H
#define NPUMEMFS_MEMPOOLS_H

struct npa;
struct fs_mempools;

int mempools_new(struct fs_mempools **out);
/* End each routing and release each pool, as the objects' exits and
 * destructors would, then free the registry. */
void mempools_free(struct fs_mempools *mp, struct npa *a);

#endif /* NPUMEMFS_MEMPOOLS_H */
