/*
 * capture.c - what the allocator knows of graph captures: how many run
 * on each device (markCaptureBegin/End) and whether a stream captures.
 */
#include <errno.h>

#include "devices.h"
#include "native.h"

bool npa_stream_capturing(aclrtStream stream)
{
	aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
	aclmdlRI model = NULL;

	/* An error (the default stream, an unknown one) is no capture. */
	if (aclmdlRICaptureGetInfo(stream, &status, &model) != ACL_SUCCESS)
		return false;
	return status != ACL_MODEL_RI_CAPTURE_STATUS_NONE;
}

static int mark(struct npa *a, int device, int delta)
{
	if (device < 0 || device >= a->ndev)
		return -ENODEV;
	struct npa_device *dev = &a->dev[device];
	int rc = 0;

	npa_device_lock(dev);
	if (dev->active_captures + delta < 0)
		rc = -EINVAL;
	else
		dev->active_captures += delta;
	npa_lock_release(&dev->lock);
	return rc;
}

int npa_mark_capture_begin(struct npa *a, int device)
{
	return mark(a, device, 1);
}

int npa_mark_capture_end(struct npa *a, int device)
{
	return mark(a, device, -1);
}
